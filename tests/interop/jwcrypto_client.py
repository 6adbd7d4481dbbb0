"""Encrypts and decrypts Health Data Connect envelopes with python jwcrypto
(Debian's python3-jwcrypto), as the client-library table of docs/clients.md says.

  python3 jwcrypto_client.py encrypt KEY KID FORM [ENC IAT JTI]   plaintext on stdin -> envelope on stdout
  python3 jwcrypto_client.py decrypt KEY FORM [ENC]               envelope on stdin -> plaintext on stdout

FORM is json (the flattened serialization, with the top-level kid added) or
compact (the kid in the protected header). ENC is A128CBC-HS256 (the
default: KEY is the 16-byte shared string, and the content-encryption key is
the string written twice) or A256GCM (KEY is the JWK's "k"). KEY may
instead be the JWK hdc keys add prints, which JWK.from_json takes as it is.
IAT and JTI, when given, go in the protected header.
"""
import json
import sys

from jwcrypto import jwe, jwk
from jwcrypto.common import base64url_encode, json_encode


def key_of(secret, enc):
    if secret.startswith("{"):
        return jwk.JWK.from_json(secret)
    if enc == "A256GCM":
        return jwk.JWK(kty="oct", k=secret)
    return jwk.JWK(kty="oct", k=base64url_encode((secret + secret).encode()))


def main(argv):
    cmd, secret = argv[1], argv[2]
    data = sys.stdin.buffer.read()
    if cmd == "encrypt":
        kid, form = argv[3], argv[4]
        enc = argv[5] if len(argv) > 5 else "A128CBC-HS256"
        key = key_of(secret, enc)
        protected = {"alg": "dir", "enc": enc}
        if len(argv) > 7:
            protected.update(iat=int(argv[6]), jti=argv[7])
        if form == "compact":
            e = jwe.JWE(data, protected=json_encode({**protected, "kid": kid}))
            e.add_recipient(key)
            sys.stdout.write(e.serialize(compact=True))
            return 0
        e = jwe.JWE(data, protected=protected)
        e.add_recipient(key)
        envelope = json.loads(e.serialize(compact=False))
        envelope["kid"] = kid
        sys.stdout.write(json.dumps(envelope))
        return 0
    if cmd == "decrypt":
        key = key_of(secret, argv[4] if len(argv) > 4 else "A128CBC-HS256")
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
