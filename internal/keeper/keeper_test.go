package keeper

import (
	"context"
	"encoding/base64"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"gocloud.dev/secrets/localsecrets"
)

func localURL(t *testing.T) string {
	t.Helper()
	key, err := localsecrets.NewRandomKey()
	if err != nil {
		t.Fatal(err)
	}
	return "base64key://" + base64.URLEncoding.EncodeToString(key[:])
}

func open(t *testing.T, url string) *Keeper {
	t.Helper()
	k, err := Open(context.Background(), url)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { k.Close() })
	return k
}

func TestOpenRefusesWithoutRepeatingTheURL(t *testing.T) {
	const secret = "c2VjcmV0LXNlY3JldC1zZWNyZXQtc2VjcmV0LXNlYw"
	tests := []struct{ name, url, want string }{
		{"not a URL", "::" + secret, "not a URL"},
		{"no scheme", secret, "not a URL"},
		{"an unknown scheme", "base64keys://" + secret, `scheme "base64keys" is not a keeper's`},
		{"a key of the wrong size", "base64key://" + secret, "32-byte key"},
		{"a local key with a query", localURL(t) + "?x=" + secret, "32-byte key"},
		{"a key file's URL with a host", "keyfile://" + secret + "/k", "keyfile:///absolute/path"},
		{"a missing key file", "keyfile:///nonexistent/" + secret, "no such file"},
		// The drivers quote the URL they refuse; the error quotes it
		// without its password and query.
		{"a KMS key's URL with a password", "awskms://hdc:" + secret + "@alias/hdc?bogus=1", "awskms://hdc:xxxxx@alias/hdc"},
		{"a KMS key's URL with a query", "azurekeyvault://hdc.vault.azure.net/keys/hdc?sig=" + secret, "azurekeyvault://hdc.vault.azure.net/keys/hdc"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Open(context.Background(), tt.url)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("Open: %v, want %q", err, tt.want)
			}
			if strings.Contains(strings.ReplaceAll(err.Error(), "/nonexistent/"+secret, ""), secret) {
				t.Fatalf("the error repeats the URL's key: %v", err)
			}
		})
	}
}

func TestWrapUnwrap(t *testing.T) {
	k, other := open(t, localURL(t)), open(t, localURL(t))
	d := NewDataKey()
	wrapped, err := k.Wrap(context.Background(), d)
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name    string
		keeper  *Keeper
		id      string
		wrapped []byte
		ok      bool
	}{
		{"its keeper, its id", k, d.ID(), wrapped, true},
		{"another id", k, NewDataKey().ID(), wrapped, false},
		{"another keeper", other, d.ID(), wrapped, false},
		{"altered", k, d.ID(), append([]byte{wrapped[0] ^ 1}, wrapped[1:]...), false},
		{"empty", k, d.ID(), nil, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := tt.keeper.Unwrap(context.Background(), tt.id, tt.wrapped)
			if !tt.ok {
				if !errors.Is(err, ErrUnwrap) {
					t.Fatalf("Unwrap: %v, want ErrUnwrap", err)
				}
				return
			}
			if err != nil || got.ID() != d.ID() || got.raw != d.raw {
				t.Fatalf("Unwrap: %v", err)
			}
		})
	}
	if k.Calls() != 5 {
		t.Fatalf("Calls = %d, want 5 (a wrap and four unwraps)", k.Calls())
	}
}

// altered returns s with one character, well inside its last part, made
// another: replacing its last two with "AA" left it as it was when it
// ended so, and a changed last character may only change bits the
// decoder ignores.
func altered(s string) string {
	i := len(s) - 5
	c := byte('A')
	if s[i] == c {
		c = 'B'
	}
	return s[:i] + string(c) + s[i+1:]
}

func TestSealOpen(t *testing.T) {
	d, other := NewDataKey(), NewDataKey()
	sealed := d.Seal([]byte("whsec_secret"), "subscriptions", "s1")
	if !IsSealed(sealed) || strings.Contains(sealed, "whsec") {
		t.Fatalf("sealed form %q", sealed)
	}
	tests := []struct {
		name    string
		key     *DataKey
		sealed  string
		binding []string
		ok      bool
	}{
		{"its key and binding", d, sealed, []string{"subscriptions", "s1"}, true},
		{"another row", d, sealed, []string{"subscriptions", "s2"}, false},
		{"another table", d, sealed, []string{"signing_keys", "s1"}, false},
		{"parts joined", d, sealed, []string{"subscriptionss1"}, false},
		{"a part moved", d, sealed, []string{"subscription", "ss1"}, false},
		{"another data key", other, sealed, []string{"subscriptions", "s1"}, false},
		{"another data key's id", d, strings.Replace(sealed, d.ID(), other.ID(), 1), []string{"subscriptions", "s1"}, false},
		{"altered", d, altered(sealed), []string{"subscriptions", "s1"}, false},
		{"truncated", d, sealed[:20], []string{"subscriptions", "s1"}, false},
		{"plain", d, "whsec_secret", []string{"subscriptions", "s1"}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := tt.key.Open(tt.sealed, tt.binding...)
			if tt.ok != (err == nil) || tt.ok && string(got) != "whsec_secret" {
				t.Fatalf("Open = %q, %v; want ok %v", got, err, tt.ok)
			}
			if err != nil && !errors.Is(err, ErrOpen) {
				t.Fatalf("Open error %v is not ErrOpen", err)
			}
		})
	}
}

func TestDerive(t *testing.T) {
	d := NewDataKey()
	a, b := d.Derive("audit chain"), d.Derive("audit checkpoint")
	if string(a) == string(b) || len(a) != 32 || string(a) != string(d.Derive("audit chain")) {
		t.Fatal("Derive is not a function of the data key and the purpose")
	}
	if string(a) == string(NewDataKey().Derive("audit chain")) {
		t.Fatal("two data keys derive the same key")
	}
}

func TestKeyFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "keeper.key")
	url, err := CreateKeyFile(path)
	if err != nil {
		t.Fatal(err)
	}
	k := open(t, url)
	d := NewDataKey()
	wrapped, err := k.Wrap(context.Background(), d)
	if err != nil {
		t.Fatal(err)
	}
	again, err := CreateKeyFile(path)
	if err != nil || again != url {
		t.Fatalf("a second CreateKeyFile: %q, %v", again, err)
	}
	if _, err := open(t, again).Unwrap(context.Background(), d.ID(), wrapped); err != nil {
		t.Fatalf("the key file's key changed: %v", err)
	}
	if err := os.Chmod(path, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := Open(context.Background(), url); err == nil || !strings.Contains(err.Error(), "chmod 600") {
		t.Fatalf("a key file others may read was opened: %v", err)
	}
}

func FuzzOpen(f *testing.F) {
	d := newDataKey("0123456789abcdef", make([]byte, KeySize))
	f.Add(d.Seal([]byte("secret"), "t", "1"), "t", "1")
	f.Add("hdc1.0123456789abcdef.", "t", "1")
	f.Add("hdc1..", "", "")
	f.Fuzz(func(t *testing.T, sealed, table, id string) {
		plain, err := d.Open(sealed, table, id)
		if err != nil {
			if !errors.Is(err, ErrOpen) || plain != nil {
				t.Fatalf("Open = %q, %v", plain, err)
			}
			return
		}
		if !IsSealed(sealed) {
			t.Fatalf("opened %q, which is not sealed", sealed)
		}
	})
}

func TestID(t *testing.T) {
	a, b := localURL(t), localURL(t)
	if open(t, a).ID() == open(t, b).ID() {
		t.Fatal("two keys have one ID")
	}
	if open(t, a).ID() != open(t, a).ID() || strings.Contains(open(t, a).ID(), strings.TrimPrefix(a, "base64key://")) {
		t.Fatal("the ID is not a stable digest of the key")
	}
	path := filepath.Join(t.TempDir(), "k")
	url, err := CreateKeyFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if open(t, url).ID() == open(t, a).ID() {
		t.Fatal("a key file and a URL key have one ID")
	}
}
