// Encrypts and decrypts Health Data Connect envelopes with the npm `jose`
// library only, so the Go tests can check our codec against an independent
// implementation.
//
//   node jwe.mjs encrypt KEY KID    plaintext on stdin → request envelope on stdout
//                                   (FlattenedEncrypt, then the top-level kid added)
//   node jwe.mjs decrypt KEY        request or response envelope on stdin → plaintext on stdout
//
// KEY is the 16-byte shared string; the content-encryption key is the string
// written twice, as the specification says.
import { FlattenedEncrypt, flattenedDecrypt } from 'jose';

const [cmd, shared, kid] = process.argv.slice(2);
const key = new TextEncoder().encode(shared + shared);

const chunks = [];
for await (const chunk of process.stdin) chunks.push(chunk);
const input = Buffer.concat(chunks);

if (cmd === 'encrypt') {
  const jwe = await new FlattenedEncrypt(input)
    .setProtectedHeader({ alg: 'dir', enc: 'A128CBC-HS256' })
    .encrypt(key);
  process.stdout.write(JSON.stringify({ ...jwe, kid }));
} else if (cmd === 'decrypt') {
  try {
    const { plaintext } = await flattenedDecrypt(JSON.parse(input.toString('utf8')), key);
    process.stdout.write(plaintext);
  } catch (err) {
    process.stderr.write(`jose: ${err.code ?? err.name}: ${err.message}\n`);
    process.exit(1);
  }
} else {
  process.stderr.write('usage: node jwe.mjs encrypt KEY KID | decrypt KEY\n');
  process.exit(2);
}
