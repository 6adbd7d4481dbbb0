// Verifies Health Data Connect webhook deliveries with the npm
// `standardwebhooks` library only, so the Go tests can check our signatures
// against an independent implementation.
//
//   node webhook.mjs verify    stdin: a JSON array of {"key", "headers", "body"}
//                              stdout: a JSON array of {"ok": true, "payload"} or {"ok": false, "error"}
//
// key is the subscription's signing_key. The backend signs with its UTF-8
// bytes as the raw HMAC key, so it is passed as bytes with format "raw" (the
// library's string form of a raw key keeps only the low byte of each UTF-16
// unit). The timestamp tolerance is the library's default, five minutes.
import { Webhook } from 'standardwebhooks';

const [cmd] = process.argv.slice(2);
if (cmd !== 'verify') {
  process.stderr.write('usage: node webhook.mjs verify < deliveries.json\n');
  process.exit(2);
}

const chunks = [];
for await (const chunk of process.stdin) chunks.push(chunk);
const deliveries = JSON.parse(Buffer.concat(chunks).toString('utf8'));

const results = deliveries.map(({ key, headers, body }) => {
  try {
    const wh = new Webhook(Buffer.from(key, 'utf8'), { format: 'raw' });
    return { ok: true, payload: wh.verify(body, headers) };
  } catch (err) {
    return { ok: false, error: `${err.name}: ${err.message}` };
  }
});
process.stdout.write(JSON.stringify(results));
