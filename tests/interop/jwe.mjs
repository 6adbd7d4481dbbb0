// Encrypts and decrypts Health Data Connect envelopes with the npm `jose`
// library only, so the Go tests can check our codec against an independent
// implementation.
//
//   node jwe.mjs encrypt KEY KID [FORM [ENC IAT JTI]]   plaintext on stdin → envelope on stdout
//   node jwe.mjs decrypt KEY [FORM [ENC]]               envelope on stdin → plaintext on stdout
//
// FORM is json (the default: FlattenedEncrypt, then the top-level kid added)
// or compact (CompactEncrypt, the kid in the protected header). ENC is
// A128CBC-HS256 (the default: KEY is the 16-byte shared string, and the
// content-encryption key is the string written twice, as the specification
// says) or A256GCM (KEY is the JWK's "k"). KEY may instead be the JWK hdc
// keys add prints, a JSON object, which importJWK imports as it is. IAT and
// JTI, when given, are set in the protected header (IAT a number of seconds).
import { CompactEncrypt, FlattenedEncrypt, base64url, compactDecrypt, flattenedDecrypt, importJWK } from 'jose';
import { program } from './program.mjs';

export async function run([cmd, secret, ...rest], input) {
  const keyOf = (enc) => secret.startsWith('{')
    ? importJWK(JSON.parse(secret))
    : enc === 'A256GCM' ? base64url.decode(secret) : new TextEncoder().encode(secret + secret);
  if (cmd === 'encrypt') {
    const [kid, form = 'json', enc = 'A128CBC-HS256', iat, jti] = rest;
    const fresh = iat ? { iat: Number(iat), jti } : {};
    if (form === 'compact') {
      const jwe = await new CompactEncrypt(input)
        .setProtectedHeader({ alg: 'dir', enc, kid, ...fresh })
        .encrypt(await keyOf(enc));
      return { stdout: jwe };
    }
    const jwe = await new FlattenedEncrypt(input)
      .setProtectedHeader({ alg: 'dir', enc, ...fresh })
      .encrypt(await keyOf(enc));
    return { stdout: JSON.stringify({ ...jwe, kid }) };
  }
  if (cmd === 'decrypt') {
    const [form = 'json', enc = 'A128CBC-HS256'] = rest;
    const text = input.toString('utf8').trim();
    try {
      const { plaintext } = form === 'compact'
        ? await compactDecrypt(text, await keyOf(enc))
        : await flattenedDecrypt(JSON.parse(text), await keyOf(enc));
      return { stdout: Buffer.from(plaintext) };
    } catch (err) {
      return { code: 1, stderr: `jose: ${err.code ?? err.name}: ${err.message}\n` };
    }
  }
  return { code: 2, stderr: 'usage: node jwe.mjs encrypt KEY KID [FORM [ENC IAT JTI]] | decrypt KEY [FORM [ENC]]\n' };
}

await program(import.meta.url, run);
