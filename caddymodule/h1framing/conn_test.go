package h1framing

import (
	"bufio"
	"errors"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"
)

// wrapped is a listener whose connections are Conns.
type wrapped struct{ net.Listener }

func (w wrapped) Accept() (net.Conn, error) {
	c, err := w.Listener.Accept()
	if err != nil {
		return nil, err
	}
	return &Conn{Conn: c}, nil
}

// serve runs net/http over Conns, as Caddy does, and returns its address.
func serve(t *testing.T, h2c bool) string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{ReadHeaderTimeout: 5 * time.Second, Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		time.Sleep(20 * time.Millisecond) // a handler still running as the next bytes arrive
		_, _ = io.WriteString(w, r.URL.Path)
	})}
	if h2c {
		// Caddy's servers accept HTTP/2 without TLS: net/http then
		// reads the first 14 bytes alone, to look for its preface.
		srv.Protocols = new(http.Protocols)
		srv.Protocols.SetHTTP1(true)
		srv.Protocols.SetUnencryptedHTTP2(true)
	}
	go srv.Serve(wrapped{ln})
	t.Cleanup(func() { srv.Close() })
	return ln.Addr().String()
}

// TestConnWithNetHTTP: requests before a refused one are answered, the
// refused one gets the problem, and the connection closes with nothing
// after it served, however the bytes arrive.
func TestConnWithNetHTTP(t *testing.T) {
	large := "GET / HTTP/1.1\r\nHost: a\r\nX-Large: " + strings.Repeat("a", MaxHeader) + "\r\n\r\n"
	tests := []struct {
		name   string
		pieces []string // written with a pause between them
		want   []int
	}{
		{"ambiguous first", []string{both + get}, []int{400}},
		{"ambiguous after two", []string{get + post + both + get}, []int{200, 200, 400}},
		{"ambiguous, its header in pieces", []string{get + both[:20], both[20:40], both[40:] + get}, []int{200, 400}},
		{"ambiguous, a byte while a handler runs", []string{get + both[:1], both[1:]}, []int{200, 400}},
		{"well-framed", []string{get + chunked + post}, []int{200, 200, 200}},
		{"well-framed, in pieces", []string{get[:5], get[5:] + chunked[:30], chunked[30:] + post}, []int{200, 200, 200}},
		{"a header block too large", []string{get + large}, []int{200, 431}},
	}
	for _, h2c := range []bool{false, true} {
		addr := serve(t, h2c)
		for _, tt := range tests {
			name := tt.name
			if h2c {
				name += ", HTTP/2 without TLS on"
			}
			t.Run(name, func(t *testing.T) {
				got := exchange(t, addr, tt.pieces, len(tt.want))
				if len(got) != len(tt.want) {
					t.Fatalf("answers %v, want %v", got, tt.want)
				}
				for i := range got {
					if got[i] != tt.want[i] {
						t.Fatalf("answers %v, want %v", got, tt.want)
					}
				}
			})
		}
	}
}

// exchange writes pieces to a new connection and returns the statuses of
// the answers until the server closes it, or until want answers when the
// last one is 200.
func exchange(t *testing.T, addr string, pieces []string, want int) []int {
	t.Helper()
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	return exchangeOn(t, conn, pieces, want)
}

// exchangeOn is exchange on an open connection, which it closes.
func exchangeOn(t *testing.T, conn net.Conn, pieces []string, want int) []int {
	t.Helper()
	defer conn.Close()
	_ = conn.SetDeadline(time.Now().Add(10 * time.Second))
	for i, p := range pieces {
		if i > 0 {
			time.Sleep(50 * time.Millisecond)
		}
		if _, err := io.WriteString(conn, p); err != nil {
			t.Fatal(err)
		}
	}
	br := bufio.NewReader(conn)
	var got []int
	for {
		resp, err := http.ReadResponse(br, nil)
		if err != nil {
			if !errors.Is(err, io.EOF) && !errors.Is(err, io.ErrUnexpectedEOF) {
				t.Fatalf("after %v: %v", got, err)
			}
			return got
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		got = append(got, resp.StatusCode)
		if resp.StatusCode == 200 && len(got) == want {
			return got
		}
		if (resp.StatusCode == 400 || resp.StatusCode == 431) && (resp.Header.Get("Content-Type") != "application/problem+json" ||
			!strings.Contains(string(body), "invalid_request")) {
			t.Fatalf("the refusal: %s %s", resp.Header, body)
		}
	}
}
