// Command jwxclient encrypts and decrypts Health Data Connect envelopes with
// github.com/lestrrat-go/jwx/v3, the most used Go JOSE library. It is a
// module of its own so that the product's go.mod does not grow.
//
//	jwxclient encrypt KEY KID FORM [ENC IAT JTI]   plaintext on stdin → envelope on stdout
//	jwxclient decrypt KEY FORM [ENC]               envelope on stdin → plaintext on stdout
//
// FORM is json (flattened, with jwx's one setting for it:
// WithLegacyHeaderMerging(false), so that alg is not repeated in a
// per-recipient header), json-default (what jwx writes without that setting,
// which the gateway refuses, naming alg), or compact. ENC is A128CBC-HS256
// (the default: KEY is the 16-byte shared string, and the content-encryption
// key is the string written twice) or A256GCM (KEY is the JWK's "k"). IAT
// and JTI, when given, are set in the protected header.
package main

import (
	"bytes"
	"encoding/base64"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"

	"github.com/lestrrat-go/jwx/v3/jwa"
	"github.com/lestrrat-go/jwx/v3/jwe"
	"github.com/lestrrat-go/jwx/v3/jwk"
)

func main() {
	if err := run(os.Args[1:], os.Stdin, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "jwx:", err)
		os.Exit(1)
	}
}

func run(args []string, in io.Reader, out io.Writer) error {
	if len(args) < 3 {
		return fmt.Errorf("usage: jwxclient encrypt KEY KID FORM [ENC IAT JTI] | decrypt KEY FORM [ENC]")
	}
	data, err := io.ReadAll(in)
	if err != nil {
		return err
	}
	var result []byte
	switch {
	case args[0] == "encrypt" && (len(args) == 4 || len(args) == 7):
		var key []byte
		if key, err = keyOf(args[1], args[4:]); err == nil {
			result, err = encrypt(key, args[2], args[3], args[4:], data)
		}
	case args[0] == "decrypt":
		var key []byte
		if key, err = keyOf(args[1], args[3:]); err == nil {
			result, err = jwe.Decrypt(bytes.TrimSpace(data), jwe.WithKey(jwa.DIRECT(), key))
		}
	default:
		return fmt.Errorf("unknown command %q", args[0])
	}
	if err != nil {
		return err
	}
	_, err = out.Write(result)
	return err
}

// keyOf returns the content-encryption key of secret for the enc that
// starts rest (A128CBC-HS256 when rest is empty); secret may instead be the
// JWK hdc keys add prints, which jwk.ParseKey takes as it is.
func keyOf(secret string, rest []string) ([]byte, error) {
	if strings.HasPrefix(secret, "{") {
		k, err := jwk.ParseKey([]byte(secret))
		if err != nil {
			return nil, err
		}
		var raw []byte
		return raw, jwk.Export(k, &raw)
	}
	if len(rest) > 0 && rest[0] == "A256GCM" {
		return base64.RawURLEncoding.DecodeString(secret)
	}
	return []byte(secret + secret), nil
}

// encrypt seals plaintext; fresh is empty or ENC IAT JTI.
func encrypt(key []byte, kid, form string, fresh []string, plaintext []byte) ([]byte, error) {
	h := jwe.NewHeaders()
	enc := jwa.A128CBC_HS256() // jwx's default is A256GCM
	if err := h.Set(jwe.KeyIDKey, kid); err != nil {
		return nil, err
	}
	if len(fresh) == 3 {
		if fresh[0] == "A256GCM" {
			enc = jwa.A256GCM()
		}
		iat, err := strconv.ParseInt(fresh[1], 10, 64)
		if err != nil {
			return nil, err
		}
		if err := h.Set("iat", iat); err != nil {
			return nil, err
		}
		if err := h.Set("jti", fresh[2]); err != nil {
			return nil, err
		}
	}
	opts := []jwe.EncryptOption{
		jwe.WithKey(jwa.DIRECT(), key),
		jwe.WithContentEncryption(enc),
		jwe.WithProtectedHeaders(h),
	}
	switch form {
	case "json":
		opts = append(opts, jwe.WithJSON(), jwe.WithLegacyHeaderMerging(false))
	case "json-default":
		opts = append(opts, jwe.WithJSON())
	case "compact":
	default:
		return nil, fmt.Errorf("unknown form %q", form)
	}
	return jwe.Encrypt(plaintext, opts...)
}
