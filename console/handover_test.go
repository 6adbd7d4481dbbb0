package console

import (
	"encoding/json"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/health-data-connect/hdc/internal/apiclient"
)

// download gets path as a download: its status, Content-Disposition and
// body.
func (b *browser) download(path string) (int, string, string) {
	b.t.Helper()
	resp, err := b.http.Get(b.url + path)
	if err != nil {
		b.t.Fatal(err)
	}
	disposition := resp.Header.Get("Content-Disposition")
	status, body := read(b.t, resp)
	return status, disposition, body
}

// TestCredentialsFile: a client created with a first key has its secret
// and its key's shown once, and its credentials file downloaded once: the
// file hdc clients create and hdc keys add write with --credentials-out
// (the client, its secret and workspace, the key in both its forms, the
// base URL and the edge's authority); asked again, it is gone, and the
// page reloaded offers it no more. A key added later hands over a file of
// the key alone, as hdc keys add writes into a new file.
func TestCredentialsFile(t *testing.T) {
	t.Parallel()
	s := newStack(t)
	a := s.consoles[alice].signIn()
	created := a.submit("/clients", url.Values{"workspace": {"acme"}, "first_key": {"A256GCM"}})
	page := a.follow(created)
	client := find(t, page.body, `id="new-client" href="/clients/([^"]+)"`)
	secret, keySecret := find(t, page.body, `id="secret">([^<]+)<`), find(t, page.body, `id="key-secret">([^<]+)<`)
	link := find(t, page.body, `id="download-credentials" href="([^"]+)"`)
	status, disposition, body := a.download(link)
	if status != http.StatusOK || disposition != `attachment; filename="hdc-credentials-`+client+`.json"` {
		t.Fatalf("the download: %d, %q\n%s", status, disposition, body)
	}
	var c apiclient.Credentials
	if err := json.Unmarshal([]byte(body), &c); err != nil {
		t.Fatalf("%v: %s", err, body)
	}
	if c.ClientID != client || c.ClientSecret != secret || c.WorkspaceID != "acme" || c.EncryptionKey != keySecret || c.Enc != "A256GCM" ||
		c.Kid == "" || c.JWK == nil || c.JWK.K != keySecret || c.BaseURL != testHandover.BaseURL || c.CA != testHandover.EdgeCA {
		t.Fatalf("the credentials file: %s", body)
	}
	if string(c.Encode()) != body {
		t.Fatalf("the file is not as hdc writes it:\n%s\nwant\n%s", body, c.Encode())
	}
	if enc, err := c.KeyEnc(); err != nil || enc != "A256GCM" {
		t.Fatalf("hdc call reads the file's key as %q, %v", enc, err)
	}
	if status, disposition, body := a.download(link); status != http.StatusGone || disposition != "" || strings.Contains(body, secret) {
		t.Fatalf("the file again: %d, %q\n%s", status, disposition, body)
	}
	if again := a.follow(created); strings.Contains(again.body, "download-credentials") || strings.Contains(again.body, secret) {
		t.Fatalf("the result reloaded:\n%s", again.body)
	}
	_, body = a.get("/clients/" + client)
	added := a.follow(a.post("/clients/"+client+"/keys", formOf(t, body, "/clients/"+client+"/keys")))
	status, _, body = a.download(find(t, added.body, `id="download-credentials" href="([^"]+)"`))
	var k apiclient.Credentials
	if err := json.Unmarshal([]byte(body), &k); status != http.StatusOK || err != nil || k.ClientID != client || k.ClientSecret != "" ||
		k.EncryptionKey != find(t, added.body, `id="secret">([^<]+)<`) || k.Enc != "A128CBC-HS256" {
		t.Fatalf("the added key's file: %d, %v\n%s", status, err, body)
	}
	newClient(t, a, "globex")
	granted := a.submit("/sharing", url.Values{"client": {client}, "workspace": {"globex"}}) // a secret without a file
	for _, path := range []string{"/results/" + formKey() + "/credentials", granted.location + "/credentials"} {
		if status, _, _ := a.download(path); status != http.StatusNotFound {
			t.Errorf("%s: %d, want 404", path, status)
		}
	}
}

// TestFirstKeyRefused: a client whose first key the API refuses is
// created all the same, and its page shows its secret, says why the key
// was not made, and hands over the file of the secret alone.
func TestFirstKeyRefused(t *testing.T) {
	t.Parallel()
	a := newStack(t).consoles[alice].signIn()
	page := a.follow(a.submit("/clients", url.Values{"workspace": {"acme"}, "first_key": {"A512"}}))
	secret := find(t, page.body, `id="secret">([^<]+)<`)
	if !strings.Contains(page.body, `id="key-error"`) || strings.Contains(page.body, `id="key-secret"`) {
		t.Fatalf("the client whose key was refused:\n%s", page.body)
	}
	status, _, body := a.download(find(t, page.body, `id="download-credentials" href="([^"]+)"`))
	var c apiclient.Credentials
	if err := json.Unmarshal([]byte(body), &c); status != http.StatusOK || err != nil || c.ClientSecret != secret || c.Kid != "" {
		t.Fatalf("the file: %d, %v\n%s", status, err, body)
	}
}
