// One encrypted flow through Node's own fetch (undici, HTTP/1.1 with
// keep-alive, so one connection), the envelopes made and opened with npm
// jose: an encrypted login, an encrypted upload, then encrypted retrieves
// of the record, in the compact serialization. Node trusts the edge's root
// through NODE_EXTRA_CA_CERTS, which the test sets.
//
//   node fetch_client.mjs    settings in HDC_FLOW_* (tests/transport_test.go),
//                            a JSON summary on stdout
import { readFile } from 'node:fs/promises';
import { CompactEncrypt, compactDecrypt } from 'jose';

const env = process.env;
const key = new TextEncoder().encode(env.HDC_FLOW_KEY + env.HDC_FLOW_KEY);
const statuses = [];

async function send(method, path, token, body) {
  const headers = { 'X-Encryption': 'JWE' };
  if (token) headers.Authorization = `Bearer ${token}`;
  let payload;
  if (body === undefined) {
    Object.assign(headers, { 'X-Encryption-Kid': env.HDC_FLOW_KID, Accept: 'application/jose' });
  } else {
    headers['Content-Type'] = 'application/jose';
    payload = await new CompactEncrypt(new TextEncoder().encode(JSON.stringify(body)))
      .setProtectedHeader({ alg: 'dir', enc: 'A128CBC-HS256', kid: env.HDC_FLOW_KID })
      .encrypt(key);
  }
  const resp = await fetch(env.HDC_FLOW_BASE + path, { method, headers, body: payload, signal: AbortSignal.timeout(30000) });
  const text = await resp.text();
  statuses.push(resp.status);
  if (resp.status !== 200) throw new Error(`${method} ${path}: ${resp.status} ${text}`);
  const { plaintext } = await compactDecrypt(text.trim(), key);
  return JSON.parse(new TextDecoder().decode(plaintext));
}

const tokens = await send('POST', '/connect-auth/v1/account/login', undefined,
  { client_id: env.HDC_FLOW_CLIENT_ID, client_secret: env.HDC_FLOW_CLIENT_SECRET });
const file = await readFile(env.HDC_FLOW_FILE);
const upload = await send('POST', '/mr/api/v2/docs', tokens.access_token, { file: file.toString('base64') });
const record = upload.care_context_id;
let bundle;
for (let i = 0; i < Number(env.HDC_FLOW_RETRIEVES); i++) {
  bundle = await send('GET', `/health/api/v1/fhir/retrieve?identifier=${encodeURIComponent(record)}`, tokens.access_token);
}
process.stdout.write(JSON.stringify({ statuses, versions: [], care_context_id: record, bundle }));
