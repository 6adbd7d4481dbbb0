package opscmd

import (
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/health-data-connect/hdc/cmd/hdc/internal/clitest"
	"github.com/health-data-connect/hdc/internal/contract"
	"github.com/health-data-connect/hdc/internal/problem"
	"github.com/health-data-connect/hdc/internal/testkit"
)

// standIn is a backend's internal listener standing in for one, over the
// hop's TLS: it answers every publication as its answer says and counts
// the publications it got.
type standIn struct {
	url string
	got atomic.Int32
}

// startStandIn starts a stand-in whose answer is a status code (a 202
// publishes the event as id), "hangup" (it reads the event and closes the
// connection without an answer), "closed" (nothing listens) or
// "foreign-ca" (its handshake refuses the publisher's certificate, which
// another authority issued).
func startStandIn(t *testing.T, hop, foreign, answer, id string) *standIn {
	t.Helper()
	s := &standIn{}
	if answer == "closed" {
		// Nothing listens there, and no other test takes the address
		// until this one ends.
		s.url = "https://" + testkit.FreeAddr(t)
		return s
	}
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost || r.URL.Path != contract.PathEvents {
			t.Errorf("the stand-in got %s %s", r.Method, r.URL.Path)
		}
		io.Copy(io.Discard, r.Body)
		s.got.Add(1)
		code, _ := strconv.Atoi(answer)
		switch {
		case answer == "hangup":
			conn, _, err := w.(http.Hijacker).Hijack()
			if err == nil {
				conn.Close()
			}
		case code == http.StatusAccepted:
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(code)
			fmt.Fprintf(w, `{"id":%q,"deliveries":1}`, id)
		case code < 500:
			problem.Write(w, problem.New(code, problem.CodeUnknownEvent, "the stand-in knows no event"))
		default:
			w.WriteHeader(code)
		}
	}))
	clientCA := hop
	if answer == "foreign-ca" {
		clientCA = foreign
	}
	srv.Config.ErrorLog = log.New(io.Discard, "", 0) // the handshakes it refuses
	srv.TLS = &tls.Config{Certificates: []tls.Certificate{loadPair(t, hop, "backend")}, ClientCAs: certPool(t, clientCA),
		ClientAuth: tls.RequireAndVerifyClientCert, MinVersion: tls.VersionTLS13}
	srv.StartTLS()
	t.Cleanup(srv.Close)
	s.url = srv.URL
	return s
}

func loadPair(t *testing.T, dir, name string) tls.Certificate {
	t.Helper()
	pair, err := tls.LoadX509KeyPair(filepath.Join(dir, name+".pem"), filepath.Join(dir, name+"-key.pem"))
	if err != nil {
		t.Fatal(err)
	}
	return pair
}

func certPool(t *testing.T, dir string) *x509.CertPool {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, "ca.pem"))
	if err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(b)
	return pool
}

// TestEventsPublishFailover: hdc events publish reads --backend-internal as
// the edge reads HDC_BACKEND_INTERNAL, a space-separated list, and tries
// the next listener only when the one tried did not publish the event: it
// could not be reached, its handshake refused the publisher, or it
// answered 500 or 503. A 4xx, a 504 or a connection lost after the event
// was sent ends the publication there, so that no event is published
// twice. Each failure names its listener, never a password in its URL.
func TestEventsPublishFailover(t *testing.T) {
	t.Parallel()
	hop, foreign := hopDir(t), hopDir(t)
	if res := clitest.Run(t, nil, "tls", "issue", "--role", "publisher", "--dir", hop); res.Err != nil {
		t.Fatalf("tls issue: %v: %s", res.Err, res.Stderr)
	}
	const password = "s3cret-of-a-listener"
	tests := []struct {
		name    string
		answers []string
		asked   []int32 // the publications each listener got
		named   int     // how many listeners, from the first, standard error names as failed
		ok      bool
		want    []string // on standard error, beside the output or in the error
	}{
		{"the first publishes", []string{"202", "202"}, []int32{1, 0}, 0, true, nil},
		{"closed, then published", []string{"closed", "202"}, []int32{0, 1}, 1, true, []string{"connection refused", "trying the next"}},
		{"503, then published", []string{"503", "202"}, []int32{1, 1}, 1, true, []string{"503 Service Unavailable"}},
		{"500, then published", []string{"500", "closed", "202"}, []int32{1, 0, 1}, 2, true, []string{"500 Internal Server Error", "connection refused"}},
		{"a refused certificate, then published", []string{"foreign-ca", "202"}, []int32{0, 1}, 1, true, []string{"certificate"}},
		{"a 4xx is the answer", []string{"400", "202"}, []int32{1, 0}, 1, false, []string{"400 unknown_event", "the stand-in knows no event"}},
		{"a 504 may have published", []string{"504", "202"}, []int32{1, 0}, 1, false, []string{"504 Gateway Timeout", "may have published"}},
		{"a hang-up may have published", []string{"hangup", "202"}, []int32{1, 0}, 1, false, []string{"may have published", "not trying"}},
		{"none publishes", []string{"closed", "503"}, []int32{0, 1}, 2, false, []string{"no listener published", "connection refused", "503"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			var standIns []*standIn
			var urls []string
			for i, a := range tt.answers {
				s := startStandIn(t, hop, foreign, a, "event-"+strconv.Itoa(i))
				standIns = append(standIns, s)
				// A password in a listener's URL is never printed.
				urls = append(urls, strings.Replace(s.url, "https://", "https://hdc:"+password+"@", 1))
			}
			res := clitest.Run(t, nil, "events", "publish", "--backend-internal", strings.Join(urls, " "),
				"--workspace", "acme", "--type", "receipt.created", "--data", "{}", "--cert", filepath.Join(hop, "publisher.pem"),
				"--key", filepath.Join(hop, "publisher-key.pem"), "--ca", filepath.Join(hop, "ca.pem"))
			var got []int32
			for _, s := range standIns {
				got = append(got, s.got.Load())
			}
			if !slices.Equal(got, tt.asked) {
				t.Errorf("the listeners got %v publications, want %v", got, tt.asked)
			}
			if (res.Err == nil) != tt.ok {
				t.Fatalf("publish: %v, stdout %q, stderr %q", res.Err, res.Stdout, res.Stderr)
			}
			// Publishing, the listener after those that failed prints its event.
			if tt.ok {
				if pub := decode[struct{ ID string }](t, string(res.Stdout)); pub.ID != "event-"+strconv.Itoa(tt.named) {
					t.Errorf("printed %s; want listener %d's event", res.Stdout, tt.named)
				}
			}
			for _, w := range tt.want {
				if !strings.Contains(string(res.Stderr), w) {
					t.Errorf("standard error %q does not say %q", res.Stderr, w)
				}
			}
			for _, s := range standIns[:tt.named] {
				if !strings.Contains(string(res.Stderr), strings.TrimPrefix(s.url, "https://")) {
					t.Errorf("standard error %q does not name the listener %s", res.Stderr, s.url)
				}
			}
			if strings.Contains(string(res.Stderr), password) || strings.Contains(string(res.Stdout), password) {
				t.Errorf("hdc printed a listener's password: %s%s", res.Stdout, res.Stderr)
			}
		})
	}
}

// TestEventsPublishListeners: a --backend-internal that names no listener,
// or a listener that is not an http or https URL with a host, is refused
// before any listener is asked, without the password it may hold.
func TestEventsPublishListeners(t *testing.T) {
	t.Parallel()
	s := startStandIn(t, hopDir(t), "", "202", "event-0")
	tests := []struct{ name, internal, want string }{
		{"nothing", " ", "names no listener"},
		{"a port that is not one", s.url + " https://hdc:s3cret@127.0.0.1:port", "listener 2"},
		{"no scheme", s.url + " 127.0.0.1:9081", "listener 2"},
		{"no host", "https:// " + s.url, "listener 1"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			res := clitest.Run(t, nil, "events", "publish", "--backend-internal", tt.internal,
				"--workspace", "acme", "--type", "receipt.created", "--data", "{}")
			if res.Err == nil || !strings.Contains(string(res.Stderr), tt.want) || strings.Contains(string(res.Stderr), "s3cret") {
				t.Errorf("publish to %q: %v, stderr %q; want a refusal saying %q", tt.internal, res.Err, res.Stderr, tt.want)
			}
		})
	}
	if n := s.got.Load(); n != 0 {
		t.Errorf("the listener got %d publications", n)
	}
}
