package apiclient

import (
	"encoding/pem"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/health-data-connect/hdc/internal/clientkey"
	"github.com/health-data-connect/hdc/internal/jwe"
)

// TestKeyEnc (first deployment, finding 2): an encrypted call takes the
// key's content encryption from the credentials, from the JWK, or from the
// key's form, and a refusal names what is missing or wrong, never "a kid
// and its key" when both were given.
func TestKeyEnc(t *testing.T) {
	t.Parallel()
	gcm := jwe.NewGCMSecret()
	jwk := clientkey.JWK{Kty: "oct", Kid: "k1", Enc: jwe.EncA256GCM, K: gcm}
	tests := []struct {
		name string
		c    Credentials
		want string // the enc, or a part of the error
	}{
		{"A256GCM by its form", Credentials{Kid: "k1", EncryptionKey: gcm}, jwe.EncA256GCM},
		{"A128CBC-HS256 by its form", Credentials{Kid: "k1", EncryptionKey: "0123456789abcdef"}, jwe.EncA128CBCHS256},
		{"named", Credentials{Kid: "k1", EncryptionKey: gcm, Enc: jwe.EncA256GCM}, jwe.EncA256GCM},
		{"the JWK's", Credentials{Kid: "k1", EncryptionKey: gcm, JWK: &jwk}, jwe.EncA256GCM},
		{"no kid", Credentials{EncryptionKey: gcm}, "the key's kid"},
		{"no key", Credentials{Kid: "k1"}, "needs the key"},
		{"another enc named", Credentials{Kid: "k1", EncryptionKey: gcm, Enc: jwe.EncA128CBCHS256}, "not an A128CBC-HS256 key"},
		{"a key of neither form", Credentials{Kid: "k1", EncryptionKey: "short"}, "neither kind's"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			enc, err := tt.c.KeyEnc()
			if !strings.Contains(enc+errText(err), tt.want) {
				t.Fatalf("KeyEnc = %q, %v; want %q", enc, err, tt.want)
			}
			if strings.Contains(errText(err), tt.c.EncryptionKey) && tt.c.EncryptionKey != "" {
				t.Fatalf("the refusal quotes the key: %v", err)
			}
		})
	}
}

func errText(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

// TestCredentialsCA (first deployment, finding 3): a client trusts the
// edge's private authority that its credentials name, and only it.
func TestCredentialsCA(t *testing.T) {
	t.Parallel()
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusNoContent) }))
	defer srv.Close()
	root := string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw}))
	get := func(c Credentials) error {
		cl, err := New(c, "", false)
		if err != nil {
			return err
		}
		resp, err := cl.http.Get(srv.URL)
		if err == nil {
			resp.Body.Close()
		}
		return err
	}
	if err := get(Credentials{BaseURL: srv.URL}); err == nil {
		t.Fatal("a private authority was trusted without the credentials naming it")
	}
	if err := get(Credentials{BaseURL: srv.URL, CA: root}); err != nil {
		t.Fatalf("with the authority named: %v", err)
	}
	if _, err := New(Credentials{CA: "not a certificate"}, "", false); err == nil || !strings.Contains(err.Error(), "--cacert") {
		t.Fatalf("a CA that holds no certificate: %v", err)
	}
}

// TestCredentialsRoundTrip: the file written is the file read, its key in
// both forms, mode 0600.
func TestCredentialsRoundTrip(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "clinic.json")
	c := Credentials{BaseURL: "https://api.example.org", ClientID: "c1", ClientSecret: "s", WorkspaceID: "w", CA: "pem"}
	c.SetKey(clientkey.New("c1", "k1", "", jwe.EncA256GCM, false, time.Now()))
	if err := c.Save(path); err != nil {
		t.Fatal(err)
	}
	got, err := ReadCredentials(path)
	if err != nil || got.Kid != "k1" || got.Enc != jwe.EncA256GCM || got.JWK == nil || got.JWK.K != c.EncryptionKey || got.CA != "pem" {
		t.Fatalf("read back %+v, %v", got, err)
	}
}
