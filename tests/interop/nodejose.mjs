// Encrypts and decrypts Health Data Connect envelopes with npm node-jose.
//
//   node nodejose.mjs encrypt KEY KID FORM   plaintext on stdin → envelope on stdout
//   node nodejose.mjs decrypt KEY FORM       envelope on stdin → plaintext on stdout
//
// FORM is json (flattened) or compact. node-jose names a key by the key's
// own kid, so the key is made with ours; it protects every header field.
import jose from 'node-jose';

const [cmd, shared, ...rest] = process.argv.slice(2);
const chunks = [];
for await (const chunk of process.stdin) chunks.push(chunk);
const input = Buffer.concat(chunks);

async function key(kid) {
  const k = jose.util.base64url.encode(Buffer.from(shared + shared));
  return jose.JWK.asKey(kid ? { kty: 'oct', k, kid } : { kty: 'oct', k });
}

if (cmd === 'encrypt') {
  const [kid, form] = rest;
  const format = form === 'compact' ? 'compact' : 'flattened';
  const out = await jose.JWE.createEncrypt({ format, fields: { alg: 'dir', enc: 'A128CBC-HS256' } }, await key(kid))
    .update(input).final();
  process.stdout.write(typeof out === 'string' ? out : JSON.stringify(out));
} else if (cmd === 'decrypt') {
  const [form] = rest;
  const text = input.toString('utf8').trim();
  try {
    const { plaintext } = await jose.JWE.createDecrypt(await key()).decrypt(form === 'compact' ? text : JSON.parse(text));
    process.stdout.write(plaintext);
  } catch (err) {
    process.stderr.write(`node-jose: ${err.name}: ${err.message}\n`);
    process.exit(1);
  }
} else {
  process.stderr.write('usage: node nodejose.mjs encrypt KEY KID FORM | decrypt KEY FORM\n');
  process.exit(2);
}
