// Encrypts and decrypts Health Data Connect envelopes with the npm `jose`
// library only, so the Go tests can check our codec against an independent
// implementation.
//
//   node jwe.mjs encrypt KEY KID [FORM]   plaintext on stdin → envelope on stdout
//   node jwe.mjs decrypt KEY [FORM]       envelope on stdin → plaintext on stdout
//
// FORM is json (the default: FlattenedEncrypt, then the top-level kid added)
// or compact (CompactEncrypt, the kid in the protected header). KEY is the
// 16-byte shared string; the content-encryption key is the string written
// twice, as the specification says.
import { CompactEncrypt, FlattenedEncrypt, compactDecrypt, flattenedDecrypt } from 'jose';

const [cmd, shared, ...rest] = process.argv.slice(2);
const key = new TextEncoder().encode(shared + shared);

const chunks = [];
for await (const chunk of process.stdin) chunks.push(chunk);
const input = Buffer.concat(chunks);

if (cmd === 'encrypt') {
  const [kid, form = 'json'] = rest;
  if (form === 'compact') {
    const jwe = await new CompactEncrypt(input)
      .setProtectedHeader({ alg: 'dir', enc: 'A128CBC-HS256', kid })
      .encrypt(key);
    process.stdout.write(jwe);
  } else {
    const jwe = await new FlattenedEncrypt(input)
      .setProtectedHeader({ alg: 'dir', enc: 'A128CBC-HS256' })
      .encrypt(key);
    process.stdout.write(JSON.stringify({ ...jwe, kid }));
  }
} else if (cmd === 'decrypt') {
  const [form = 'json'] = rest;
  const text = input.toString('utf8').trim();
  try {
    const { plaintext } = form === 'compact'
      ? await compactDecrypt(text, key)
      : await flattenedDecrypt(JSON.parse(text), key);
    process.stdout.write(plaintext);
  } catch (err) {
    process.stderr.write(`jose: ${err.code ?? err.name}: ${err.message}\n`);
    process.exit(1);
  }
} else {
  process.stderr.write('usage: node jwe.mjs encrypt KEY KID [FORM] | decrypt KEY [FORM]\n');
  process.exit(2);
}
