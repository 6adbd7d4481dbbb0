// Verifies Health Data Connect webhook deliveries with an npm Standard
// Webhooks implementation only, so the Go tests can check our signatures
// against independent ones: `standardwebhooks` (the default) or `svix`
// (Svix's client, with HMAC code of its own).
//
//   node webhook.mjs verify [standardwebhooks|svix]
//       stdin: a JSON array of {"key", "headers", "body"}
//       stdout: a JSON array of {"ok": true, "payload"} or {"ok": false, "error"}
//
// key is the subscription's signing_key, passed as a subscriber would: a
// whsec_ secret as the string itself, which both libraries decode; any
// other key as its UTF-8 bytes with format "raw" (the libraries' string
// form of a raw key keeps only the low byte of each UTF-16 unit). The
// timestamp tolerance is the libraries' default, five minutes.
import { Webhook as StandardWebhook } from 'standardwebhooks';
import { Webhook as SvixWebhook } from 'svix';
import { program } from './program.mjs';

export async function run([cmd, lib = 'standardwebhooks'], input) {
  const Webhook = { standardwebhooks: StandardWebhook, svix: SvixWebhook }[lib];
  if (cmd !== 'verify' || !Webhook) {
    return { code: 2, stderr: 'usage: node webhook.mjs verify [standardwebhooks|svix] < deliveries.json\n' };
  }
  const deliveries = JSON.parse(input.toString('utf8'));
  const results = deliveries.map(({ key, headers, body }) => {
    try {
      const wh = key.startsWith('whsec_') ? new Webhook(key) : new Webhook(Buffer.from(key, 'utf8'), { format: 'raw' });
      return { ok: true, payload: wh.verify(body, headers) };
    } catch (err) {
      return { ok: false, error: `${err.name}: ${err.message}` };
    }
  });
  return { stdout: JSON.stringify(results) };
}

await program(import.meta.url, run);
