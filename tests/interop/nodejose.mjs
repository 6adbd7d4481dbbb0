// Encrypts and decrypts Health Data Connect envelopes with npm node-jose.
//
//   node nodejose.mjs encrypt KEY KID FORM [ENC IAT JTI]   plaintext on stdin → envelope on stdout
//   node nodejose.mjs decrypt KEY FORM [ENC]               envelope on stdin → plaintext on stdout
//
// FORM is json (flattened) or compact. ENC is A128CBC-HS256 (the default:
// KEY is the 16-byte shared string, written twice) or A256GCM (KEY is the
// JWK's "k"); KEY may instead be the JWK hdc keys add prints, which
// JWK.asKey takes as it is. IAT and JTI, when given, go in the protected
// header. node-jose names a key by the key's own kid, so a key made from
// KEY is made with ours; it protects every header field.
import jose from 'node-jose';
import { program } from './program.mjs';

export async function run([cmd, secret, ...rest], input) {
  const key = (enc, kid) => {
    if (secret.startsWith('{')) return jose.JWK.asKey(JSON.parse(secret));
    const k = enc === 'A256GCM' ? secret : jose.util.base64url.encode(Buffer.from(secret + secret));
    return jose.JWK.asKey(kid ? { kty: 'oct', k, kid } : { kty: 'oct', k });
  };
  if (cmd === 'encrypt') {
    const [kid, form, enc = 'A128CBC-HS256', iat, jti] = rest;
    const format = form === 'compact' ? 'compact' : 'flattened';
    const fields = iat ? { alg: 'dir', enc, iat: Number(iat), jti } : { alg: 'dir', enc };
    const out = await jose.JWE.createEncrypt({ format, fields }, await key(enc, kid)).update(input).final();
    return { stdout: typeof out === 'string' ? out : JSON.stringify(out) };
  }
  if (cmd === 'decrypt') {
    const [form, enc = 'A128CBC-HS256'] = rest;
    const text = input.toString('utf8').trim();
    try {
      const { plaintext } = await jose.JWE.createDecrypt(await key(enc)).decrypt(form === 'compact' ? text : JSON.parse(text));
      return { stdout: plaintext };
    } catch (err) {
      return { code: 1, stderr: `node-jose: ${err.name}: ${err.message}\n` };
    }
  }
  return { code: 2, stderr: 'usage: node nodejose.mjs encrypt KEY KID FORM [ENC IAT JTI] | decrypt KEY FORM [ENC]\n' };
}

await program(import.meta.url, run);
