package interop

import (
	"bytes"
	"crypto/rand"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/health-data-connect/hdc/tests/hdctest"
)

const interopKey = "0123456789abcdef"

func interopPayloads() map[string][]byte {
	big := make([]byte, 1<<20)
	_, _ = rand.Read(big)
	return map[string][]byte{
		"empty":  {},
		"json":   []byte(`{"client_id":"c1","client_secret":"s1","note":"héllo ✓"}`),
		"block":  bytes.Repeat([]byte("x"), 16),
		"binary": big[:1000],
		"1MiB":   big,
	}
}

// TestJoseEncryptsHDCDecrypts: npm jose's FlattenedEncrypt, with the
// top-level kid added as our clients do, decrypted by `hdc jwe decrypt`.
func TestJoseEncryptsHDCDecrypts(t *testing.T) {
	t.Parallel()
	hdc := hdctest.Binary(t, "hdc")
	for name, pt := range interopPayloads() {
		t.Run(name, func(t *testing.T) {
			env, err := hdctest.Node(t, pt, "jwe.mjs", "encrypt", interopKey, "k1")
			if err != nil {
				t.Fatal(err)
			}
			var members map[string]any
			if err := json.Unmarshal(env, &members); err != nil || members["kid"] != "k1" {
				t.Fatalf("jose envelope: %v %v", members["kid"], err)
			}
			got, err := hdctest.RunProgram(t, env, hdc, "jwe", "decrypt", "--key", interopKey)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got, pt) {
				t.Fatalf("hdc decrypted %d bytes, want %d", len(got), len(pt))
			}
		})
	}
}

// TestHDCEncryptsJoseDecrypts: request and response envelopes from `hdc jwe
// encrypt`, decrypted by npm jose's flattenedDecrypt.
func TestHDCEncryptsJoseDecrypts(t *testing.T) {
	t.Parallel()
	hdc := hdctest.Binary(t, "hdc")
	for name, pt := range interopPayloads() {
		for _, shape := range []string{"request", "response"} {
			t.Run(fmt.Sprintf("%s/%s", name, shape), func(t *testing.T) {
				args := []string{"jwe", "encrypt", "--key", interopKey, "--kid", "k1"}
				if shape == "response" {
					args = append(args, "--response")
				}
				env, err := hdctest.RunProgram(t, pt, hdc, args...)
				if err != nil {
					t.Fatal(err)
				}
				got, err := hdctest.Node(t, env, "jwe.mjs", "decrypt", interopKey)
				if err != nil {
					t.Fatal(err)
				}
				if !bytes.Equal(got, pt) {
					t.Fatalf("jose decrypted %d bytes, want %d", len(got), len(pt))
				}
			})
		}
	}
}

// TestJoseRejectsTampering is the control: the same path fails when the
// envelope is altered, so the tests above could fail.
func TestJoseRejectsTampering(t *testing.T) {
	t.Parallel()
	hdc := hdctest.Binary(t, "hdc")
	env, err := hdctest.RunProgram(t, []byte(`{"a":1}`), hdc, "jwe", "encrypt", "--key", interopKey, "--response")
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	_ = json.Unmarshal(env, &m)
	tag := m["tag"].(string)
	m["tag"] = strings.Repeat("A", len(tag))
	tampered, _ := json.Marshal(m)
	if _, err := hdctest.Node(t, tampered, "jwe.mjs", "decrypt", interopKey); err == nil {
		t.Fatal("jose accepted a tampered tag")
	}
	if _, err := hdctest.Node(t, env, "jwe.mjs", "decrypt", "fedcba9876543210"); err == nil {
		t.Fatal("jose decrypted with the wrong key")
	}
}
