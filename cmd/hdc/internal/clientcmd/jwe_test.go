package clientcmd

import (
	"bytes"
	"encoding/json"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/health-data-connect/hdc/cmd/hdc/internal/clitest"
	"github.com/health-data-connect/hdc/internal/jwe"
)

type envelopeVector struct {
	SharedKey     string            `json:"shared_key"`
	Envelope      map[string]string `json:"envelope"`
	PlaintextUTF8 string            `json:"plaintext_utf8"`
}

func loadEnvelopeVectors(t *testing.T) map[string]envelopeVector {
	data, err := os.ReadFile("../../../../testdata/jwe.json")
	if err != nil {
		t.Fatal(err)
	}
	var all map[string]json.RawMessage
	if err := json.Unmarshal(data, &all); err != nil {
		t.Fatal(err)
	}
	out := map[string]envelopeVector{}
	for _, name := range []string{"request_envelope", "request_envelope_spaced_protected_header", "response_envelope"} {
		var v envelopeVector
		if err := json.Unmarshal(all[name], &v); err != nil {
			t.Fatal(err)
		}
		out[name] = v
	}
	return out
}

// TestJWEDecryptVectors: hdc jwe decrypt prints each vector's plaintext,
// from the JSON form and, for requests, from the compact form.
func TestJWEDecryptVectors(t *testing.T) {
	t.Parallel()
	for name, v := range loadEnvelopeVectors(t) {
		inputs := map[string][]byte{}
		inputs["json"], _ = json.Marshal(v.Envelope)
		if p, ok := v.Envelope["protected"]; ok {
			e := v.Envelope
			inputs["compact"] = []byte(p + ".." + e["iv"] + "." + e["ciphertext"] + "." + e["tag"] + "\n")
		}
		for form, in := range inputs {
			t.Run(name+"/"+form, func(t *testing.T) {
				r := clitest.Run(t, in, "jwe", "decrypt", "--key", v.SharedKey)
				if r.Err != nil {
					t.Fatalf("%v: %s", r.Err, r.Stderr)
				}
				if string(r.Stdout) != v.PlaintextUTF8 {
					t.Fatalf("printed %q, want %q", r.Stdout, v.PlaintextUTF8)
				}
			})
		}
	}
}

// TestJWERoundTrip encrypts with hdc in each shape, under a key of each
// enc, with and without iat and jti, and decrypts with hdc.
func TestJWERoundTrip(t *testing.T) {
	t.Parallel()
	plaintext := []byte(`{"file":"aGVsbG8="}`)
	for _, key := range [][]string{{"--key", "0123456789abcdef"}, {"--key", jwe.NewGCMSecret(), "--enc", "A256GCM"}} {
		for _, shape := range [][]string{{}, {"--compact"}, {"--response"}, {"--fresh"}, {"--fresh", "--compact"}} {
			args := append(append([]string{"jwe", "encrypt", "--kid", "k1"}, key...), shape...)
			enc := clitest.Run(t, plaintext, args...)
			if enc.Err != nil {
				t.Fatalf("%v: %v %s", args, enc.Err, enc.Stderr)
			}
			if bytes.Contains(enc.Stdout, plaintext) {
				t.Fatalf("%v: envelope contains the plaintext", args)
			}
			if slices.Contains(shape, "--fresh") {
				form := jwe.Request
				if slices.Contains(shape, "--compact") {
					form = jwe.Compact
				}
				e, _, err := jwe.Parse(bytes.TrimSpace(enc.Stdout), form)
				if err != nil {
					t.Fatalf("%v: %v", args, err)
				}
				if e.Header.Iat < time.Now().Unix()-60 || len(e.Header.Jti) < 16 {
					t.Fatalf("%v: iat %d, jti %q", args, e.Header.Iat, e.Header.Jti)
				}
			}
			dec := clitest.Run(t, enc.Stdout, append([]string{"jwe", "decrypt"}, key...)...)
			if dec.Err != nil || !bytes.Equal(dec.Stdout, plaintext) {
				t.Fatalf("%v: decrypt gave %q, %v %s", args, dec.Stdout, dec.Err, dec.Stderr)
			}
		}
	}
}

// TestJWEDecryptFailures: crypto failures share one message; format errors
// are described; nothing is printed on standard output.
func TestJWEDecryptFailures(t *testing.T) {
	t.Parallel()
	vectors := loadEnvelopeVectors(t)
	v := vectors["request_envelope"]
	good, _ := json.Marshal(v.Envelope)
	flipped := func(member string) []byte {
		e := map[string]string{}
		for k, val := range v.Envelope {
			e[k] = val
		}
		b := []byte(e[member])
		if b[0] == 'A' {
			b[0] = 'B'
		} else {
			b[0] = 'A'
		}
		e[member] = string(b)
		out, _ := json.Marshal(e)
		return out
	}
	var cryptoMessage string
	for _, tt := range []struct {
		name   string
		key    string
		in     []byte
		crypto bool
		want   string
	}{
		{"wrong key", "fedcba9876543210", good, true, ""},
		{"flipped tag", v.SharedKey, flipped("tag"), true, ""},
		{"flipped iv", v.SharedKey, flipped("iv"), true, ""},
		{"flipped ciphertext", v.SharedKey, flipped("ciphertext"), true, ""},
		{"not an envelope", v.SharedKey, []byte(`{"hello":1}`), false, "unknown member"},
		{"short key", "short", good, false, "exactly 16 bytes"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			r := clitest.Run(t, tt.in, "jwe", "decrypt", "--key", tt.key)
			if r.Err == nil || len(r.Stdout) != 0 {
				t.Fatalf("err = %v, stdout %q", r.Err, r.Stdout)
			}
			msg := strings.TrimSpace(string(r.Stderr))
			if tt.crypto {
				if cryptoMessage == "" {
					cryptoMessage = msg
				}
				if msg != cryptoMessage {
					t.Fatalf("crypto failure message %q differs from %q", msg, cryptoMessage)
				}
			} else if !strings.Contains(msg, tt.want) {
				t.Fatalf("stderr %q, want it to mention %q", msg, tt.want)
			}
		})
	}
	if cryptoMessage != "hdc: jwe: decryption failed" {
		t.Fatalf("crypto failure message is %q", cryptoMessage)
	}
}
