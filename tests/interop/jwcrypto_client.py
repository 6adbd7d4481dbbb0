"""Encrypts and decrypts Health Data Connect envelopes with python jwcrypto
(Debian's python3-jwcrypto), as the README's client code does.

  python3 jwcrypto_client.py encrypt KEY KID FORM   plaintext on stdin -> envelope on stdout
  python3 jwcrypto_client.py decrypt KEY FORM       envelope on stdin -> plaintext on stdout

FORM is json (the flattened serialization, with the top-level kid added) or
compact (the kid in the protected header). KEY is the 16-byte shared string;
the content-encryption key is the string written twice.
"""
import json
import sys

from jwcrypto import jwe, jwk
from jwcrypto.common import base64url_encode, json_encode


def main(argv):
    cmd, shared = argv[1], argv[2]
    key = jwk.JWK(kty="oct", k=base64url_encode((shared + shared).encode()))
    data = sys.stdin.buffer.read()
    if cmd == "encrypt":
        kid, form = argv[3], argv[4]
        if form == "compact":
            e = jwe.JWE(data, protected=json_encode({"alg": "dir", "enc": "A128CBC-HS256", "kid": kid}))
            e.add_recipient(key)
            sys.stdout.write(e.serialize(compact=True))
            return 0
        e = jwe.JWE(data, protected={"alg": "dir", "enc": "A128CBC-HS256"})
        e.add_recipient(key)
        envelope = json.loads(e.serialize(compact=False))
        envelope["kid"] = kid
        sys.stdout.write(json.dumps(envelope))
        return 0
    if cmd == "decrypt":
        data = data.strip()
        e = jwe.JWE()
        try:
            e.deserialize(data.decode(), key=key)
        except Exception as err:  # noqa: BLE001 - report any failure as the library's
            sys.stderr.write("jwcrypto: %s: %s\n" % (type(err).__name__, err))
            return 1
        sys.stdout.buffer.write(e.payload)
        return 0
    sys.stderr.write(__doc__)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv))
