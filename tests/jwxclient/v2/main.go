// Command v2 encrypts and decrypts Health Data Connect envelopes with
// github.com/lestrrat-go/jwx/v2, the version many Go services still run.
// Its JSON serialization repeats alg in the recipient's header, which RFC
// 7516 §7.2.1 forbids and the gateway refuses, and v2 has no setting to
// stop it: the compact serialization is the one to use, and the only one
// this program writes.
//
//	v2 encrypt JWK KID compact [ENC IAT JTI]   plaintext on stdin → envelope on stdout
//	v2 decrypt JWK FORM [ENC]                  envelope on stdin → plaintext on stdout
//
// JWK is the key as hdc keys add prints it, which jwk.ParseKey takes as it
// is; ENC is the content encryption the header names (A128CBC-HS256 when
// not given). IAT and JTI, when given, are set in the protected header.
package main

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"strconv"

	"github.com/lestrrat-go/jwx/v2/jwa"
	"github.com/lestrrat-go/jwx/v2/jwe"
	"github.com/lestrrat-go/jwx/v2/jwk"
)

func main() {
	if err := run(os.Args[1:], os.Stdin, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "jwx v2:", err)
		os.Exit(1)
	}
}

func run(args []string, in io.Reader, out io.Writer) error {
	if len(args) < 3 {
		return fmt.Errorf("usage: v2 encrypt JWK KID compact [ENC IAT JTI] | decrypt JWK FORM [ENC]")
	}
	data, err := io.ReadAll(in)
	if err != nil {
		return err
	}
	key, err := jwk.ParseKey([]byte(args[1]))
	if err != nil {
		return err
	}
	var result []byte
	switch {
	case args[0] == "encrypt" && args[3] == "compact" && (len(args) == 4 || len(args) == 7):
		result, err = encrypt(key, args[2], args[4:], data)
	case args[0] == "decrypt":
		result, err = jwe.Decrypt(bytes.TrimSpace(data), jwe.WithKey(jwa.DIRECT, key))
	default:
		return fmt.Errorf("unknown command or form %q", args)
	}
	if err != nil {
		return err
	}
	_, err = out.Write(result)
	return err
}

// encrypt seals plaintext in the compact serialization; fresh is empty or
// ENC IAT JTI.
func encrypt(key jwk.Key, kid string, fresh []string, plaintext []byte) ([]byte, error) {
	h := jwe.NewHeaders()
	enc := jwa.A128CBC_HS256 // jwx's default is A256GCM
	if err := h.Set(jwe.KeyIDKey, kid); err != nil {
		return nil, err
	}
	if len(fresh) == 3 {
		enc = jwa.ContentEncryptionAlgorithm(fresh[0])
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
	return jwe.Encrypt(plaintext, jwe.WithKey(jwa.DIRECT, key), jwe.WithContentEncryption(enc),
		jwe.WithProtectedHeaders(h), jwe.WithCompact())
}
