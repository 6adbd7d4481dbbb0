// Command gojoseclient encrypts and decrypts Health Data Connect envelopes
// with github.com/go-jose/go-jose/v4, for the client matrix of the tests.
//
//	gojoseclient encrypt KEY KID FORM [ENC IAT JTI]   plaintext on stdin → envelope on stdout
//	gojoseclient decrypt KEY FORM [ENC]               envelope on stdin → plaintext on stdout
//
// FORM is json (flattened, the kid in the protected header) or compact.
// ENC is A128CBC-HS256 (the default: KEY is the 16-byte shared string, and
// the content-encryption key is the string written twice) or A256GCM (KEY
// is the JWK's "k"). IAT and JTI, when given, are set in the protected
// header (EncrypterOptions.WithHeader).
package main

import (
	"bytes"
	"encoding/base64"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"

	jose "github.com/go-jose/go-jose/v4"
)

func main() {
	if err := run(os.Args[1:], os.Stdin, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "go-jose:", err)
		os.Exit(1)
	}
}

func run(args []string, in io.Reader, out io.Writer) error {
	if len(args) < 3 {
		return fmt.Errorf("usage: gojoseclient encrypt KEY KID FORM [ENC IAT JTI] | decrypt KEY FORM [ENC]")
	}
	data, err := io.ReadAll(in)
	if err != nil {
		return err
	}
	var result []byte
	switch {
	case args[0] == "encrypt" && (len(args) == 4 || len(args) == 7):
		result, err = encrypt(args[1], args[2], args[3], args[4:], data)
	case args[0] == "decrypt":
		result, err = decrypt(args[1], args[2], args[3:], bytes.TrimSpace(data))
	default:
		return fmt.Errorf("unknown command %q", args[0])
	}
	if err != nil {
		return err
	}
	_, err = out.Write(result)
	return err
}

// keyOf returns the content encryption that starts rest (A128CBC-HS256
// when rest is empty) and secret's content-encryption key for it; secret
// may instead be the JWK hdc keys add prints, which JSONWebKey reads as it
// is.
func keyOf(secret string, rest []string) (jose.ContentEncryption, []byte, error) {
	enc := jose.A128CBC_HS256
	if len(rest) > 0 && rest[0] == "A256GCM" {
		enc = jose.A256GCM
	}
	if strings.HasPrefix(secret, "{") {
		var k jose.JSONWebKey
		if err := k.UnmarshalJSON([]byte(secret)); err != nil {
			return enc, nil, err
		}
		key, ok := k.Key.([]byte)
		if !ok {
			return enc, nil, fmt.Errorf("the JWK is not a symmetric key")
		}
		return enc, key, nil
	}
	if enc == jose.A256GCM {
		k, err := base64.RawURLEncoding.DecodeString(secret)
		return jose.A256GCM, k, err
	}
	return jose.A128CBC_HS256, []byte(secret + secret), nil
}

// encrypt seals plaintext; fresh is empty or ENC IAT JTI.
func encrypt(secret, kid, form string, fresh []string, plaintext []byte) ([]byte, error) {
	enc, key, err := keyOf(secret, fresh)
	if err != nil {
		return nil, err
	}
	opts := &jose.EncrypterOptions{}
	if len(fresh) == 3 {
		iat, err := strconv.ParseInt(fresh[1], 10, 64)
		if err != nil {
			return nil, err
		}
		opts = opts.WithHeader("iat", iat).WithHeader("jti", fresh[2])
	}
	e, err := jose.NewEncrypter(enc, jose.Recipient{Algorithm: jose.DIRECT, Key: key, KeyID: kid}, opts)
	if err != nil {
		return nil, err
	}
	obj, err := e.Encrypt(plaintext)
	if err != nil {
		return nil, err
	}
	if form == "compact" {
		s, err := obj.CompactSerialize()
		return []byte(s), err
	}
	return []byte(obj.FullSerialize()), nil
}

func decrypt(secret, form string, rest []string, envelope []byte) ([]byte, error) {
	enc, key, err := keyOf(secret, rest)
	if err != nil {
		return nil, err
	}
	algs, encs := []jose.KeyAlgorithm{jose.DIRECT}, []jose.ContentEncryption{enc}
	var obj *jose.JSONWebEncryption
	if form == "compact" {
		obj, err = jose.ParseEncryptedCompact(string(envelope), algs, encs)
	} else {
		obj, err = jose.ParseEncryptedJSON(string(envelope), algs, encs)
	}
	if err != nil {
		return nil, err
	}
	return obj.Decrypt(key)
}
