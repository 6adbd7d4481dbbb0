package hopclient

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/health-data-connect/hdc/internal/contract"
	"github.com/health-data-connect/hdc/internal/problem"
	"github.com/health-data-connect/hdc/internal/testkit"
)

// backend is a backend's internal listener standing in for one: it answers
// every request with status (or hangs up on it: hangup), its name, the
// path and the body it read, and counts the requests it got.
type backend struct {
	*httptest.Server
	hits atomic.Int32
}

// hangup is the status of a backend that reads the request and closes the
// connection without an answer.
const hangup = -1

func newBackend(t *testing.T, name string, status int) *backend {
	t.Helper()
	b := &backend{}
	b.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b.hits.Add(1)
		body, _ := io.ReadAll(r.Body)
		if status == hangup {
			if conn, _, err := w.(http.Hijacker).Hijack(); err == nil {
				conn.Close()
			}
			return
		}
		if status == http.StatusServiceUnavailable {
			problem.Write(w, problem.New(status, problem.CodeNotReady, "not serving yet"))
			return
		}
		w.WriteHeader(status)
		fmt.Fprint(w, name+" "+r.URL.Path+string(body))
	}))
	t.Cleanup(b.Close)
	return b
}

// down is the URL of an address that refuses connections: nothing
// listens there, and no other test takes it until the test ends.
func down(t *testing.T) string {
	t.Helper()
	return "http://" + testkit.FreeAddr(t)
}

// backends returns the URLs of backends answering statuses (0: one that
// refuses connections), and the backends.
func backends(t *testing.T, statuses []int) ([]string, []*backend) {
	t.Helper()
	var urls []string
	var bs []*backend
	for i, status := range statuses {
		if status == 0 {
			urls, bs = append(urls, down(t)), append(bs, nil)
			continue
		}
		b := newBackend(t, fmt.Sprintf("b%d", i), status)
		urls, bs = append(urls, b.URL), append(bs, b)
	}
	return urls, bs
}

func send(t *testing.T, tr *Transport, r *http.Request) (string, error) {
	t.Helper()
	resp, err := (&http.Client{Transport: tr}).Do(r)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if resp.StatusCode >= 500 {
		return string(b), fmt.Errorf("answered %d", resp.StatusCode)
	}
	return string(b), err
}

func get(t *testing.T, tr *Transport) (string, error) {
	t.Helper()
	r, err := http.NewRequestWithContext(t.Context(), http.MethodGet, tr.URL("/x"), nil)
	if err != nil {
		t.Fatal(err)
	}
	return send(t, tr, r)
}

// TestReads: a read goes to the backend that answered last, first to the
// first; on to the next when one refuses connections or answers 5xx; a
// 4xx is an answer; when none answers, the error is the last one's.
func TestReads(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name     string
		statuses []int // each backend's answer; 0: it refuses connections
		want     string
		wantErr  string
		// then is the answer of a second request: the backend that
		// answered is asked first.
		then string
	}{
		{name: "the first answers", statuses: []int{200, 200}, want: "b0 /x", then: "b0 /x"},
		{name: "the first is down", statuses: []int{0, 200}, want: "b1 /x", then: "b1 /x"},
		{name: "the first answers 5xx", statuses: []int{503, 200}, want: "b1 /x", then: "b1 /x"},
		{name: "a 4xx is an answer", statuses: []int{404, 200}, want: "b0 /x", then: "b0 /x"},
		{name: "two of three down", statuses: []int{0, 500, 200}, want: "b2 /x", then: "b2 /x"},
		{name: "a hang-up, then an answer", statuses: []int{hangup, 200}, want: "b1 /x", then: "b1 /x"},
		{name: "all down", statuses: []int{0, 502}, wantErr: "answered 502 Bad Gateway"},
		{name: "all down, the last with a problem", statuses: []int{0, 503}, wantErr: "answered 503 Service Unavailable (not_ready: not serving yet)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			urls, _ := backends(t, tt.statuses)
			tr, err := New(http.DefaultTransport, urls, Config{})
			if err != nil {
				t.Fatal(err)
			}
			for i, want := range []string{tt.want, tt.then} {
				got, err := get(t, tr)
				if tt.wantErr != "" {
					if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
						t.Fatalf("request %d: %q, %v; want an error with %q", i, got, err, tt.wantErr)
					}
					return
				}
				if err != nil || got != want {
					t.Fatalf("request %d: %q, %v; want %q", i, got, err, want)
				}
			}
		})
	}
}

// TestChanges: a request that is not a read moves on when nothing of it
// was received (a connection refused), or when it is safe to send again:
// it carries an Idempotency-Key, or its caller marked it repeatable; an
// answer Unserved says was not served moves it on too. Otherwise it stays
// with the backend that may have received it: a 5xx is its answer, a
// hang-up a *MayHaveArrived, and no other backend gets it. The body goes
// whole to each backend it is sent to.
func TestChanges(t *testing.T) {
	t.Parallel()
	unserved := func(status int) bool { return status == http.StatusServiceUnavailable }
	tests := []struct {
		name       string
		statuses   []int
		mark       func(*http.Request) *http.Request
		want       string
		wantErr    string
		mayHave    bool
		asked      []int32 // the requests each backend got
		wantStatus int     // of an answer returned as it is
	}{
		{name: "refused, then sent", statuses: []int{0, 200}, want: "b1 /x{}", asked: []int32{0, 1}},
		{name: "a 502 is the answer", statuses: []int{502, 200}, wantErr: "answered 502", asked: []int32{1, 0}},
		{name: "a hang-up may have arrived", statuses: []int{hangup, 200}, wantErr: "may have received", mayHave: true, asked: []int32{1, 0}},
		{name: "unserved, then sent", statuses: []int{503, 200}, want: "b1 /x{}", asked: []int32{1, 1}},
		{name: "with an Idempotency-Key", statuses: []int{hangup, 502, 200}, mark: withKey, want: "b2 /x{}", asked: []int32{1, 1, 1}},
		{name: "marked repeatable", statuses: []int{hangup, 502, 200}, mark: marked, want: "b2 /x{}", asked: []int32{1, 1, 1}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			urls, bs := backends(t, tt.statuses)
			tr, err := New(http.DefaultTransport, urls, Config{Unserved: unserved})
			if err != nil {
				t.Fatal(err)
			}
			r, err := http.NewRequestWithContext(t.Context(), http.MethodPost, tr.URL("/x"), strings.NewReader("{}"))
			if err != nil {
				t.Fatal(err)
			}
			if tt.mark != nil {
				r = tt.mark(r)
			}
			got, err := send(t, tr, r)
			switch {
			case tt.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tt.wantErr)):
				t.Errorf("%q, %v; want an error with %q", got, err, tt.wantErr)
			case tt.wantErr == "" && (err != nil || got != tt.want):
				t.Errorf("%q, %v; want %q", got, err, tt.want)
			case errors.As(err, new(*MayHaveArrived)) != tt.mayHave:
				t.Errorf("%v: a *MayHaveArrived: %v, want %v", err, !tt.mayHave, tt.mayHave)
			}
			var asked []int32
			for _, b := range bs {
				if b == nil {
					asked = append(asked, 0)
					continue
				}
				asked = append(asked, b.hits.Load())
			}
			if !slices.Equal(asked, tt.asked) {
				t.Errorf("the backends got %v requests, want %v", asked, tt.asked)
			}
		})
	}
}

func withKey(r *http.Request) *http.Request {
	r.Header.Set(contract.HeaderIdempotencyKey, "a-key")
	return r
}

func marked(r *http.Request) *http.Request { return r.WithContext(Repeatable(r.Context())) }

// TestAttemptDeadline: a backend that does not finish the handshake
// within the attempt's deadline is passed over, whatever the request (it
// received nothing); one that takes the request and does not answer is
// passed over for a read, and is a *MayHaveArrived for a change; each
// backend passed over is told to Skipped.
func TestAttemptDeadline(t *testing.T) {
	t.Parallel()
	silent := testkit.Silent(t)
	tests := []struct {
		name    string
		first   string // the URL of the backend that does not answer
		method  string
		mayHave bool
	}{
		{"no handshake, a change", "https://" + silent, http.MethodPost, false},
		{"no answer, a read", "http://" + silent, http.MethodGet, false},
		{"no answer, a change", "http://" + silent, http.MethodPost, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			next := newBackend(t, "next", http.StatusOK)
			var skipped []string
			tr, err := New(http.DefaultTransport, []string{tt.first, next.URL}, Config{Attempt: 200 * time.Millisecond,
				Skipped: func(b string, err error) { skipped = append(skipped, b+": "+err.Error()) }})
			if err != nil {
				t.Fatal(err)
			}
			r, err := http.NewRequestWithContext(t.Context(), tt.method, tr.URL("/x"), strings.NewReader("{}"))
			if err != nil {
				t.Fatal(err)
			}
			got, err := send(t, tr, r)
			if tt.mayHave {
				var may *MayHaveArrived
				if !errors.As(err, &may) || may.Backend != tt.first || !strings.Contains(err.Error(), "no answer within 200ms") || next.hits.Load() != 0 {
					t.Fatalf("%q, %v; want the first to have maybe received it, and no other asked", got, err)
				}
				return
			}
			if err != nil || !strings.HasPrefix(got, "next /x") || len(skipped) != 1 || !strings.HasPrefix(skipped[0], tt.first+": ") {
				t.Fatalf("%q, %v, skipped %q; want the next's answer, the first skipped", got, err, skipped)
			}
		})
	}
}

// TestBodyNotSentAgain: a request whose body cannot be given again is
// not sent to another backend.
func TestBodyNotSentAgain(t *testing.T) {
	t.Parallel()
	urls, bs := backends(t, []int{0, 200})
	tr, err := New(http.DefaultTransport, urls, Config{})
	if err != nil {
		t.Fatal(err)
	}
	r, err := http.NewRequestWithContext(t.Context(), http.MethodPost, tr.URL("/x"), io.NopCloser(strings.NewReader("{}")))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := send(t, tr, r); err == nil || !strings.Contains(err.Error(), "cannot be sent again") || bs[1].hits.Load() != 0 {
		t.Fatalf("%v; want the body not sent again", err)
	}
}

// TestCanceled: a request whose context is done is not sent on.
func TestCanceled(t *testing.T) {
	t.Parallel()
	urls, bs := backends(t, []int{503, 200})
	tr, err := New(http.DefaultTransport, urls, Config{})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	tr.cfg.Skipped = func(string, error) { t.Error("a backend skipped once the request was canceled") }
	tr.next = roundTripFunc(func(r *http.Request) (*http.Response, error) {
		cancel()
		return http.DefaultTransport.RoundTrip(r)
	})
	r, err := http.NewRequestWithContext(ctx, http.MethodGet, tr.URL("/x"), nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := send(t, tr, r); err == nil || bs[1].hits.Load() != 0 {
		t.Fatalf("%v; want the next backend not asked", err)
	}
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// TestNewRefusesBadURLs: every backend is an http or https URL with a
// host, and there is one at least; a refused one is named by its place,
// never with its password. A user, a path or a query is not used.
func TestNewRefusesBadURLs(t *testing.T) {
	t.Parallel()
	tests := []struct {
		urls []string
		want string
	}{
		{nil, "no backend"},
		{[]string{"127.0.0.1:9081"}, "listener 1, (a URL that does not parse), is not a backend's URL"},
		{[]string{"//a:1"}, "listener 1, //a:1, is not"},
		{[]string{"https://"}, "listener 1, https:, is not"},
		{[]string{"https://a:1", "https://hdc:s3cret@a:port"}, "listener 2, (a URL that does not parse), is not"},
		{[]string{"ftp://hdc:s3cret@a:1"}, "listener 1, ftp://hdc:xxxxx@a:1, is not"},
	}
	for _, tt := range tests {
		if _, err := New(http.DefaultTransport, tt.urls, Config{}); err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("New(%q) = %v; want an error with %q", tt.urls, err, tt.want)
		}
	}
	tr, err := New(http.DefaultTransport, []string{"https://hdc:s3cret@a:1/base?q=1", "http://b:2"}, Config{})
	if err != nil {
		t.Fatal(err)
	}
	for path, want := range map[string]string{"/internal/v1/events": "https://a:1/internal/v1/events", "": "https://a:1"} {
		if got := tr.URL(path); got != want {
			t.Errorf("URL(%q) = %q, want %q", path, got, want)
		}
	}
}

// TestA5xxAnswerIsNotLast: a backend whose 5xx answer to a change is
// returned as the answer is not the one that answered last: the next
// request starts where the last did.
func TestA5xxAnswerIsNotLast(t *testing.T) {
	t.Parallel()
	urls, _ := backends(t, []int{0, 502, 200})
	tr, err := New(http.DefaultTransport, urls, Config{})
	if err != nil {
		t.Fatal(err)
	}
	r, err := http.NewRequestWithContext(t.Context(), http.MethodPost, tr.URL("/x"), strings.NewReader("{}"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := send(t, tr, r); err == nil || !strings.Contains(err.Error(), "answered 502") {
		t.Fatalf("%v; want the 502 as the answer", err)
	}
	if n := tr.last.Load(); n != 0 {
		t.Fatalf("backend %d is the one that answered last, want 0", n)
	}
}

// TestUnanswered: when no backend answers, the error names each backend
// tried and its failure in the order tried, and says whether any of them
// received the request.
func TestUnanswered(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		name        string
		statuses    []int
		nothingSent bool
		want        []string
	}{
		{"every one refuses", []int{0, 0}, true, []string{": connection refused; http://", ": connection refused"}},
		{"one refuses, one answers 503", []int{0, http.StatusServiceUnavailable}, false,
			[]string{": connection refused; http://", " answered 503 Service Unavailable (not_ready: not serving yet)"}},
		{"one hangs up", []int{hangup, 0}, false, []string{"EOF; http://", ": connection refused"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			urls, _ := backends(t, tt.statuses)
			tr, err := New(http.DefaultTransport, urls, Config{})
			if err != nil {
				t.Fatal(err)
			}
			_, err = get(t, tr)
			var un *Unanswered
			if !errors.As(err, &un) || len(un.Tried) != len(urls) || un.NothingSent() != tt.nothingSent {
				t.Fatalf("error %v (%T), want an Unanswered of %d backends, nothing sent %v", err, err, len(urls), tt.nothingSent)
			}
			msg := err.Error()
			for i, u := range urls {
				if !strings.HasPrefix(un.Tried[i].Error(), u+":") && !strings.HasPrefix(un.Tried[i].Error(), u+" ") {
					t.Errorf("failure %d, %q, does not name %s", i+1, un.Tried[i], u)
				}
			}
			for _, w := range tt.want {
				if !strings.Contains(msg, w) {
					t.Errorf("error %q does not say %q", msg, w)
				}
			}
			if strings.Contains(msg, "dial tcp") {
				t.Errorf("error %q holds the dial's own words", msg)
			}
		})
	}
}

// TestWithAttempt: a request made under WithAttempt waits its own bound
// for an answer to begin, in place of the Transport's.
func TestWithAttempt(t *testing.T) {
	t.Parallel()
	slow := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-time.After(300 * time.Millisecond):
		case <-r.Context().Done():
		}
		fmt.Fprint(w, "slow")
	}))
	t.Cleanup(slow.Close)
	tr, err := New(http.DefaultTransport, []string{slow.URL}, Config{Attempt: 50 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := get(t, tr); err == nil || !strings.Contains(err.Error(), "no answer within 50ms") {
		t.Fatalf("under the Transport's bound: %v, want no answer within 50ms", err)
	}
	r, err := http.NewRequestWithContext(WithAttempt(t.Context(), 5*time.Second), http.MethodGet, tr.URL("/x"), nil)
	if err != nil {
		t.Fatal(err)
	}
	if body, err := send(t, tr, r); err != nil || body != "slow" {
		t.Fatalf("under its own bound: %q, %v", body, err)
	}
}
