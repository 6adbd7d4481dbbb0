// Command jwxclient encrypts and decrypts Health Data Connect envelopes with
// github.com/lestrrat-go/jwx/v3, the most used Go JOSE library. It is a
// module of its own so that the product's go.mod does not grow.
//
//	jwxclient encrypt KEY KID FORM   plaintext on stdin → envelope on stdout
//	jwxclient decrypt KEY FORM       envelope on stdin → plaintext on stdout
//
// FORM is json (flattened, with jwx's one setting for it:
// WithLegacyHeaderMerging(false), so that alg is not repeated in a
// per-recipient header), json-default (what jwx writes without that setting,
// which the gateway refuses, naming alg), or compact. KEY is the 16-byte
// shared string; the content-encryption key is the string written twice.
package main

import (
	"bytes"
	"fmt"
	"io"
	"os"

	"github.com/lestrrat-go/jwx/v3/jwa"
	"github.com/lestrrat-go/jwx/v3/jwe"
)

func main() {
	if err := run(os.Args[1:], os.Stdin, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "jwx:", err)
		os.Exit(1)
	}
}

func run(args []string, in io.Reader, out io.Writer) error {
	if len(args) < 3 {
		return fmt.Errorf("usage: jwxclient encrypt KEY KID FORM | decrypt KEY FORM")
	}
	key := []byte(args[1] + args[1])
	data, err := io.ReadAll(in)
	if err != nil {
		return err
	}
	var result []byte
	switch {
	case args[0] == "encrypt" && len(args) == 4:
		result, err = encrypt(key, args[2], args[3], data)
	case args[0] == "decrypt":
		result, err = jwe.Decrypt(bytes.TrimSpace(data), jwe.WithKey(jwa.DIRECT(), key))
	default:
		return fmt.Errorf("unknown command %q", args[0])
	}
	if err != nil {
		return err
	}
	_, err = out.Write(result)
	return err
}

func encrypt(key []byte, kid, form string, plaintext []byte) ([]byte, error) {
	h := jwe.NewHeaders()
	if err := h.Set(jwe.KeyIDKey, kid); err != nil {
		return nil, err
	}
	opts := []jwe.EncryptOption{
		jwe.WithKey(jwa.DIRECT(), key),
		jwe.WithContentEncryption(jwa.A128CBC_HS256()), // jwx's default is A256GCM
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
