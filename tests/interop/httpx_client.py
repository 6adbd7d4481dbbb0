"""One encrypted flow through python httpx with HTTP/2 on (Debian's
python3-httpx and python3-h2), the envelopes made and opened with jwcrypto
(python3-jwcrypto): an encrypted login, an encrypted upload, then encrypted
retrieves of the record, in the compact serialization, on one client, so one
connection. httpx speaks HTTP/2 over TLS (ALPN h2) and HTTP/1.1 in clear
text (it does not offer h2c).

  python3 httpx_client.py    settings in HDC_FLOW_* (tests/transport_test.go),
                             a JSON summary on stdout
"""
import base64
import json
import os
import sys

import httpx
from jwcrypto import jwe, jwk
from jwcrypto.common import base64url_encode, json_encode


def main():
    env = os.environ
    shared, kid = env["HDC_FLOW_KEY"], env["HDC_FLOW_KID"]
    key = jwk.JWK(kty="oct", k=base64url_encode((shared + shared).encode()))
    statuses, versions = [], []

    def seal(plaintext):
        e = jwe.JWE(plaintext, protected=json_encode({"alg": "dir", "enc": "A128CBC-HS256", "kid": kid}))
        e.add_recipient(key)
        return e.serialize(compact=True)

    def send(client, method, path, token=None, body=None):
        headers = {"X-Encryption": "JWE"}
        if token:
            headers["Authorization"] = "Bearer " + token
        if body is None:
            headers.update({"X-Encryption-Kid": kid, "Accept": "application/jose"})
            content = None
        else:
            headers["Content-Type"] = "application/jose"
            content = seal(json.dumps(body).encode())
        resp = client.request(method, env["HDC_FLOW_BASE"] + path, headers=headers, content=content)
        statuses.append(resp.status_code)
        versions.append(resp.http_version)
        if resp.status_code != 200:
            raise SystemExit("%s %s: %d %s" % (method, path, resp.status_code, resp.text))
        e = jwe.JWE()
        e.deserialize(resp.text.strip(), key=key)
        return json.loads(e.payload)

    verify = env.get("HDC_FLOW_CA") or True
    with httpx.Client(http2=True, verify=verify, timeout=30) as client:
        tokens = send(client, "POST", "/connect-auth/v1/account/login",
                      body={"client_id": env["HDC_FLOW_CLIENT_ID"], "client_secret": env["HDC_FLOW_CLIENT_SECRET"]})
        token = tokens["access_token"]
        with open(env["HDC_FLOW_FILE"], "rb") as f:
            upload = send(client, "POST", "/mr/api/v2/docs", token, {"file": base64.b64encode(f.read()).decode()})
        record = upload["care_context_id"]
        bundle = None
        for _ in range(int(env["HDC_FLOW_RETRIEVES"])):
            bundle = send(client, "GET", "/health/api/v1/fhir/retrieve?identifier=" + record, token)
    json.dump({"statuses": statuses, "versions": versions, "care_context_id": record, "bundle": bundle}, sys.stdout)


if __name__ == "__main__":
    main()
