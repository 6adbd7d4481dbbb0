"""Verifies deliveries in the eka format as receivers written for the
original service do, with their own code:

  python3 eka_receiver.py < checks.json

checks.json is a list of {"key", "signature", "body", "now_offset"}: the
signing key, the Eka-Webhook-Signature header, the body as received, and
seconds added to the clock for the docs' tolerance check. It prints, for
each, {"docs": bool, "sdk": bool, "event": str}.

docs_verify_signature and is_within_tolerance are copied from the original
service's public documentation (github.com/eka-care/eka-docs,
api-reference/connect/webhooks/webhook-signature.mdx, commit 587ddbd4c213),
the first as it is, the second with the clock as a parameter, for the
control of a stale delivery: it MACs the body as received. WebhookConsumer.verify_signature is copied
from ekapython-webhook-sdk (github.com/eka-care/ekapython-webhook-sdk,
webhook_consumer.py, verify_signature unchanged since commit 56e95b4d5471),
without its print and log lines: it parses the body and MACs
json.dumps(payload, separators=(',', ':')), so the body must come out of
Python's json unchanged.
"""
import hashlib
import hmac
import json
import sys
import time


def docs_verify_signature(secret_key, payload, signature_header):
    # payload: The webhook payload (string)
    try:
        signature_parts = dict(item.split('=') for item in signature_header.split(','))
        timestamp = signature_parts['t']
        received_signature = signature_parts['v1']
    except Exception:
        return False
    # Construct signed payload same way as Go code
    signed_payload = f"{timestamp}.{payload}"
    expected_signature = hmac.new(
        key=secret_key.encode(),
        msg=signed_payload.encode(),
        digestmod=hashlib.sha256
    ).hexdigest()
    return hmac.compare_digest(expected_signature, received_signature)


def is_within_tolerance(timestamp, tolerance=180, current_time=None):
    current_time = int(time.time()) if current_time is None else current_time
    return abs(current_time - timestamp) <= tolerance


def force_bytes(s, encoding='utf-8'):
    if isinstance(s, bytes):
        return s
    return str(s).encode(encoding)


class WebhookConsumer:
    def __init__(self, payload, signing_key):
        self.payload = payload
        self.signing_key = signing_key  # the SDK reads SIGNING_KEY from its environment

    def verify_signature(self, signature_header):
        body_str = json.dumps(self.payload, separators=(',', ':'))
        if not signature_header:
            return False, 'Missing signature'
        try:
            signature_parts = dict(item.split('=') for item in signature_header.split(','))
            timestamp = signature_parts['t']
            signature = signature_parts['v1']
        except Exception:
            return False, 'Invalid signature format'
        signed_payload = f"{timestamp}.{body_str}"
        expected_signature = hmac.new(
            key=force_bytes(self.signing_key),
            msg=force_bytes(signed_payload),
            digestmod=hashlib.sha256
        ).hexdigest()
        if not hmac.compare_digest(expected_signature, signature):
            return False, 'Invalid signature'
        return True, None


def main():
    out = []
    for c in json.load(sys.stdin):
        t = dict(item.split('=') for item in c["signature"].split(','))['t']
        now = int(time.time()) + c.get("now_offset", 0)
        docs = docs_verify_signature(c["key"], c["body"], c["signature"]) and is_within_tolerance(int(t), current_time=now)
        payload = json.loads(c["body"])
        sdk, _ = WebhookConsumer(payload, c["key"]).verify_signature(c["signature"])
        out.append({"docs": docs, "sdk": sdk, "event": payload.get("event")})
    json.dump(out, sys.stdout)
    return 0


if __name__ == "__main__":
    sys.exit(main())
