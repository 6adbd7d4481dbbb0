package console

import (
	"net"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/health-data-connect/hdc/backend/store"
)

// TestHost: the console answers only for the names it listens on, so that
// a page of a foreign name that resolves to loopback (DNS rebinding) gets
// 421 and nothing else: not a page, not a change, not the login.
func TestHost(t *testing.T) {
	t.Parallel()
	s := newStack(t)
	b := s.consoles[alice]
	u, err := url.Parse(b.url)
	if err != nil {
		t.Fatal(err)
	}
	port := u.Port()
	if status, _ := b.getHost("/login?token="+b.token, "evil.example:"+port); status != http.StatusMisdirectedRequest {
		t.Fatalf("the login under a foreign Host: %d, want 421", status)
	}
	b.signIn() // the refused login did not spend the token
	csrf := b.csrf()
	for _, tc := range []struct {
		host   string
		status int
	}{
		{"127.0.0.1:" + port, http.StatusOK},
		{"localhost:" + port, http.StatusOK},
		{"LocalHost.:" + port, http.StatusOK},
		{"[::1]:" + port, http.StatusOK},
		{"127.0.0.1", http.StatusOK},
		{"evil.example", http.StatusMisdirectedRequest},
		{"evil.example:" + port, http.StatusMisdirectedRequest},
		{"127.0.0.1.evil.example:" + port, http.StatusMisdirectedRequest},
		{"localhost.evil.example:" + port, http.StatusMisdirectedRequest},
		{"192.0.2.7:" + port, http.StatusMisdirectedRequest},
	} {
		t.Run(tc.host, func(t *testing.T) {
			for _, path := range []string{"/fleet", "/static/console.css"} {
				if status, _ := b.getHost(path, tc.host); status != tc.status {
					t.Errorf("GET %s with Host %s: %d, want %d", path, tc.host, status, tc.status)
				}
			}
		})
	}
	form := url.Values{"csrf": {csrf}, "once": {formKey()}, "workspace": {"acme"}}
	if status := b.postHost("/clients", form, "evil.example:"+port); status != http.StatusMisdirectedRequest {
		t.Fatalf("a change under a foreign Host: %d, want 421", status)
	}
	if cs, err := s.st.ListClients(t.Context(), store.ClientFilter{}); err != nil || len(cs) != 0 {
		t.Fatalf("clients after the refused change: %v, %v; want none", cs, err)
	}
}

// TestHostsOf: the names a console admits are the loopback names, the
// host of its --listen and the address it is bound to; listening on every
// interface, any address too, as no name can be rebound to an address.
func TestHostsOf(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		listen, host string
		bound        net.Addr // the listener's address, as --listen resolved
		ok           bool
	}{
		{"127.0.0.1:8090", "127.0.0.1:8090", nil, true},
		{"127.0.0.1:8090", "localhost:8090", nil, true},
		{"127.0.0.1:8090", "[::1]:8090", nil, true},
		{"127.0.0.1:8090", "[0:0:0:0:0:0:0:1]:8090", nil, true},
		{"127.0.0.1:8090", "console.example.org:8090", nil, false},
		{"127.0.0.1:8090", "", nil, false},
		{"127.0.0.1:8090", ":8090", nil, false},
		{"console.example.org:8090", "console.example.org:8090", nil, true},
		{"console.example.org:8090", "CONSOLE.example.org", nil, true},
		{"console.example.org:8090", "example.org:8090", nil, false},
		{"192.0.2.7:8090", "192.0.2.7:8090", nil, true},
		{"192.0.2.7:8090", "192.0.2.8:8090", nil, false},
		{"0.0.0.0:8090", "192.0.2.8:8090", nil, true},
		{":8090", "[2001:db8::1]:8090", nil, true},
		{":8090", "console.example.org:8090", nil, false},
		{"[::]:8090", "localhost:8090", nil, true},
		{"console.example.org:8090", "192.0.2.7:8090", &net.TCPAddr{IP: net.ParseIP("192.0.2.7"), Port: 8090}, true},
		{"console.example.org:8090", "192.0.2.8:8090", &net.TCPAddr{IP: net.ParseIP("192.0.2.7"), Port: 8090}, false},
	} {
		t.Run(tc.listen+" "+tc.host, func(t *testing.T) {
			if got := hostsOf(tc.listen).boundTo(tc.bound).admit(tc.host); got != tc.ok {
				t.Fatalf("a console on %s admits Host %q: %v, want %v", tc.listen, tc.host, got, tc.ok)
			}
		})
	}
}

// getHost returns the status and body of path asked with the Host header
// host.
func (b *browser) getHost(path, host string) (int, string) {
	b.t.Helper()
	req, err := http.NewRequestWithContext(b.t.Context(), http.MethodGet, b.url+path, nil)
	if err != nil {
		b.t.Fatal(err)
	}
	b.withCookie(req, host)
	resp, err := b.http.Do(req)
	if err != nil {
		b.t.Fatal(err)
	}
	return read(b.t, resp)
}

// withCookie sets req's Host to host, with the session cookie the browser
// holds for the console's address (the jar gives a request the cookies of
// its Host), as a browser that reached the console under the name host
// does once the name's page is the console's origin (DNS rebinding).
func (b *browser) withCookie(req *http.Request, host string) {
	u, err := url.Parse(b.url)
	if err != nil {
		b.t.Fatal(err)
	}
	req.Host = host
	for _, c := range b.http.Jar.Cookies(u) {
		req.AddCookie(c)
	}
}

// postHost posts form to path with the Host header host, as a same-origin
// page of that name does.
func (b *browser) postHost(path string, form url.Values, host string) int {
	b.t.Helper()
	req, err := http.NewRequestWithContext(b.t.Context(), http.MethodPost, b.url+path, strings.NewReader(form.Encode()))
	if err != nil {
		b.t.Fatal(err)
	}
	b.withCookie(req, host)
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Sec-Fetch-Site", "same-origin")
	resp, err := b.http.Do(req)
	if err != nil {
		b.t.Fatal(err)
	}
	status, _ := read(b.t, resp)
	return status
}
