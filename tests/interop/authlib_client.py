"""Encrypts and decrypts Health Data Connect envelopes with python authlib
(Debian's python3-authlib, authlib.jose).

  python3 authlib_client.py encrypt KEY KID FORM [ENC IAT JTI]   plaintext on stdin -> envelope on stdout
  python3 authlib_client.py decrypt KEY FORM [ENC]               envelope on stdin -> plaintext on stdout

FORM is json or compact. ENC is A128CBC-HS256 (the default: KEY is the
16-byte shared string, written twice) or A256GCM (KEY is the JWK's "k");
KEY may instead be the JWK hdc keys add prints, which JsonWebKey.import_key
takes as it is. IAT and JTI, when given, go in the protected header. authlib 1.2 writes the JSON serialization in its
general syntax only (one recipient, the kid in its header), which the gateway
accepts as it is. It reads only the general syntax too, so a flattened answer
is reshaped to it first: the documented one-line reshape,
  {**answer, "recipients": [{"encrypted_key": answer.get("encrypted_key", "")}]}
"""
import base64
import json
import sys

from authlib.jose import JsonWebEncryption, JsonWebKey


def key_of(secret, enc):
    if secret.startswith("{"):
        return JsonWebKey.import_key(json.loads(secret))
    if enc == "A256GCM":
        return base64.urlsafe_b64decode(secret + "=" * (-len(secret) % 4))
    return (secret + secret).encode()


def main(argv):
    cmd, secret = argv[1], argv[2]
    codec = JsonWebEncryption()
    data = sys.stdin.buffer.read()
    if cmd == "encrypt":
        kid, form = argv[3], argv[4]
        enc = argv[5] if len(argv) > 5 else "A128CBC-HS256"
        key = key_of(secret, enc)
        protected = {"alg": "dir", "enc": enc}
        if len(argv) > 7:
            protected.update(iat=int(argv[6]), jti=argv[7])
        if form == "compact":
            out = codec.serialize_compact({**protected, "kid": kid}, data, key)
            sys.stdout.write(out.decode())
            return 0
        out = codec.serialize_json({"protected": protected,
                                    "recipients": [{"header": {"kid": kid}}]}, data, key)
        sys.stdout.write(json.dumps(out))
        return 0
    if cmd == "decrypt":
        data = data.strip()
        form = argv[3]
        key = key_of(secret, argv[4] if len(argv) > 4 else "A128CBC-HS256")
        try:
            if form == "compact":
                payload = codec.deserialize_compact(data.decode(), key)["payload"]
            else:
                answer = json.loads(data)
                answer = {**answer, "recipients": [{"encrypted_key": answer.get("encrypted_key", "")}]}
                payload = codec.deserialize_json(answer, key)["payload"]
        except Exception as err:  # noqa: BLE001 - report any failure as the library's
            sys.stderr.write("authlib: %s: %s\n" % (type(err).__name__, err))
            return 1
        sys.stdout.buffer.write(payload)
        return 0
    sys.stderr.write(__doc__)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv))
