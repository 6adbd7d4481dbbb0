package clientcmd

import (
	"bytes"
	"encoding/base64"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/spf13/pflag"

	"github.com/health-data-connect/hdc/internal/contract"
	"github.com/health-data-connect/hdc/internal/jwe"
	"github.com/health-data-connect/hdc/internal/testkit"
)

const testKey, testKid = "unit-test-key-16", "k1"

// fakeAPI answers the login and one route as the edge would: sealed when
// the request asked for encryption. It records the route's requests, their
// bodies decrypted.
type fakeAPI struct {
	*httptest.Server
	mu       sync.Mutex
	requests []recorded
	status   int    // of the route's answer
	answer   []byte // its body, before encryption
	tamper   bool   // seal the answer under another key
	expired  int    // the route's first answers that say the token expired
}

type recorded struct {
	contentLength int64
	contentType   string
	body          []byte
	header        http.Header
}

func newFakeAPI(t *testing.T) *fakeAPI {
	t.Helper()
	key, _ := jwe.NewKey(testKey)
	other, _ := jwe.NewKey("another-key-0016")
	api := &fakeAPI{status: 200, answer: []byte(`{"ok":true}`)}
	reply := func(w http.ResponseWriter, r *http.Request, status int, body []byte, tamper bool) {
		w.Header().Set("Content-Type", "application/json")
		if r.Header.Get(contract.HeaderEncryption) == contract.EncryptionJWE {
			w.Header().Set(contract.HeaderEncryption, contract.EncryptionJWE)
			k := key
			if tamper {
				k = other
			}
			body = jwe.EncryptResponse(k, testKid, body)
		}
		w.WriteHeader(status)
		_, _ = w.Write(body)
	}
	mux := http.NewServeMux()
	mux.HandleFunc(contract.PathLogin, func(w http.ResponseWriter, r *http.Request) {
		reply(w, r, 200, []byte(`{"access_token":"a","expires_in":1800,"refresh_token":"r","refresh_expires_in":3600}`), false)
	})
	mux.HandleFunc("/route", func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		if api.expired > 0 {
			api.expired--
			reply(w, r, http.StatusUnauthorized, []byte(`{"code":"token_expired"}`), false)
			return
		}
		if r.Header.Get(contract.HeaderEncryption) == contract.EncryptionJWE && len(b) > 0 {
			e, ct, err := jwe.Parse(b, jwe.Request)
			if err == nil {
				b, err = e.Decrypt(key, ct)
			}
			if err != nil {
				http.Error(w, "bad envelope", 400)
				return
			}
		}
		api.mu.Lock()
		api.requests = append(api.requests, recorded{r.ContentLength, r.Header.Get("Content-Type"), b, r.Header.Clone()})
		api.mu.Unlock()
		reply(w, r, api.status, api.answer, api.tamper)
	})
	api.Server = httptest.NewServer(mux)
	t.Cleanup(api.Close)
	t.Setenv("XDG_CACHE_HOME", t.TempDir()) // a token cache of its own
	return api
}

// call runs hdc call against the fake API with stdin and returns its
// standard output, standard error and error.
func (api *fakeAPI) call(o callOptions, encrypt bool, stdin io.Reader, method string) (string, string, error) {
	o.base, o.clientID, o.clientSecret, o.kid, o.key, o.encrypt = api.URL, "c", "s", testKid, testKey, encrypt
	var out, errOut bytes.Buffer
	err := runCall(o, method, "/route", stdin, &out, &errOut)
	return out.String(), errOut.String(), err
}

// TestCallData: --data sends JSON given inline, read from a file (with its
// length), or from standard input (chunked from a pipe), plain or
// encrypted.
func TestCallData(t *testing.T) {
	const doc = `{"endpoint":"https://example.org/hooks"}`
	file := testkit.WriteFile(t, "sub.json", []byte(doc))
	tests := []struct {
		name    string
		data    string
		stdin   io.Reader
		chunked bool
	}{
		{"inline", doc, nil, false},
		{"@file", "@" + file, nil, false},
		{"- from a pipe", "-", strings.NewReader(doc), true},
	}
	for _, tt := range tests {
		for _, encrypt := range []bool{false, true} {
			t.Run(tt.name+map[bool]string{false: "", true: "/encrypted"}[encrypt], func(t *testing.T) {
				api := newFakeAPI(t)
				if s, ok := tt.stdin.(*strings.Reader); ok {
					s.Reset(doc)
				}
				if _, stderr, err := api.call(callOptions{data: tt.data}, encrypt, tt.stdin, "POST"); err != nil {
					t.Fatalf("%v: %s", err, stderr)
				}
				got := api.requests[0]
				if string(got.body) != doc || got.contentType != "application/json" || (got.contentLength == -1) != tt.chunked {
					t.Fatalf("the API got %q (%s), Content-Length %d", got.body, got.contentType, got.contentLength)
				}
			})
		}
	}
}

// TestCallHeader: -H sends its fields with the call, plain or encrypted,
// a field given twice with both values; a malformed field or one hdc call
// sets itself is refused before anything is sent, naming the field and
// not its value.
func TestCallHeader(t *testing.T) {
	for _, encrypt := range []bool{false, true} {
		api := newFakeAPI(t)
		o := callOptions{header: []string{"Idempotency-Key: k-1", "X-Note:a", "x-note:  b "}}
		if _, stderr, err := api.call(o, encrypt, nil, "POST"); err != nil {
			t.Fatalf("encrypted %v: %v: %s", encrypt, err, stderr)
		}
		h := api.requests[0].header
		if h.Get("Idempotency-Key") != "k-1" || !slices.Equal(h.Values("X-Note"), []string{"a", "b"}) ||
			h.Get("Authorization") != "Bearer a" {
			t.Fatalf("encrypted %v: the API got %v", encrypt, h)
		}
	}
	for field, want := range map[string]string{
		"Authorization: Bearer secret-token": "-H Authorization: hdc call sets this field itself",
		"x-encryption: none":                 "-H x-encryption: hdc call sets this field itself",
		"Content-Type: text/secret":          "-H Content-Type: hdc call sets this field itself",
		"no colon secret":                    "-H: want 'Name: value'",
		"Bad Name: secret":                   "-H: want 'Name: value'",
		"X-Ok: sec\x01ret":                   "",
		"X-Ok: sec\nret":                     "",
	} {
		t.Run(field, func(t *testing.T) {
			api := newFakeAPI(t)
			if want == "" {
				want = "-H X-Ok: the value holds a control character"
			}
			_, _, err := api.call(callOptions{header: []string{field}}, false, nil, "GET")
			if err == nil || !strings.HasPrefix(err.Error(), want) || strings.Contains(err.Error(), "secret") ||
				strings.Contains(err.Error(), "sec") {
				t.Fatalf("-H %q: %v, want %q", field, err, want)
			}
			if len(api.requests) != 0 {
				t.Fatalf("-H %q: sent %d requests", field, len(api.requests))
			}
		})
	}
}

// TestCallDataErrors: what --data refuses before anything is sent.
func TestCallDataErrors(t *testing.T) {
	api := newFakeAPI(t)
	for data, want := range map[string]string{
		"{not json":             "not valid JSON",
		"@/no/such/file.json":   "no such file",
		"@" + filepath.Dir("."): "is a directory",
	} {
		if _, _, err := api.call(callOptions{data: data}, false, nil, "POST"); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("--data %q: %v, want %q", data, err, want)
		}
	}
	if len(api.requests) != 0 {
		t.Fatal("a request was sent")
	}
}

// TestCallRetriesReplayableBodies: when the token turns out expired, a
// file is sent again with a fresh token; standard input cannot be, and the
// 401 is the answer.
func TestCallRetriesReplayableBodies(t *testing.T) {
	file := testkit.RandomBytes(100 << 10)
	path := testkit.WriteFile(t, "visit.bin", file)
	for _, encrypt := range []bool{false, true} {
		api := newFakeAPI(t)
		api.expired = 1
		if _, stderr, err := api.call(callOptions{file: path}, encrypt, nil, "POST"); err != nil || len(api.requests) != 1 {
			t.Fatalf("encrypted %v: %v, %d requests recorded: %s", encrypt, err, len(api.requests), stderr)
		}
		if got := api.requests[0].body; !bytes.Contains(got, file) && !bytes.Contains(got, []byte(base64.StdEncoding.EncodeToString(file))) {
			t.Fatalf("encrypted %v: the file did not arrive whole on the second try", encrypt)
		}
	}
	api := newFakeAPI(t)
	api.expired = 1
	if _, _, err := api.call(callOptions{data: "-"}, false, strings.NewReader(`{"a":1}`), "POST"); err == nil ||
		!strings.Contains(err.Error(), "HTTP 401") {
		t.Fatalf("standard input: %v, want the 401", err)
	}
}

// TestCallInclude: -i prints the status line and the headers, then an
// empty line, then the body, decrypted, as curl -i does; for errors too.
func TestCallInclude(t *testing.T) {
	for _, status := range []int{200, 404} {
		for _, encrypt := range []bool{false, true} {
			api := newFakeAPI(t)
			api.status = status
			out, _, err := api.call(callOptions{include: true}, encrypt, nil, "GET")
			if (err != nil) != (status != 200) {
				t.Fatalf("status %d: %v", status, err)
			}
			head, body, ok := strings.Cut(out, "\r\n\r\n")
			lines := strings.Split(head, "\r\n")
			if !ok || lines[0] != "HTTP/1.1 "+map[int]string{200: "200 OK", 404: "404 Not Found"}[status] ||
				!strings.Contains(head, "\r\nContent-Type: application/json") ||
				(encrypt && !strings.Contains(head, "\r\nX-Encryption: JWE")) || !strings.Contains(body, `"ok": true`) {
				t.Fatalf("status %d, encrypted %v: output\n%s", status, encrypt, out)
			}
		}
	}
}

// TestCallOutput: -o writes a successful answer's body, decrypted, to a
// file of mode 0600 (or to standard output for -) and prints nothing of
// it; an error answer is printed and no file is written, nor is one for
// an envelope that does not verify.
func TestCallOutput(t *testing.T) {
	big := bytes.Repeat([]byte(`{"x":"0123456789"},`), 20000) // several spool chunks
	answer := append(append([]byte("["), big...), `{}]`...)
	tests := []struct {
		name    string
		status  int
		tamper  bool
		encrypt bool
		wantErr string
	}{
		{"plain", 200, false, false, ""},
		{"encrypted", 200, false, true, ""},
		{"an error answer", 404, false, true, "HTTP 404"},
		{"an envelope that does not verify", 200, true, true, "does not decrypt under key k1"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			api := newFakeAPI(t)
			api.status, api.answer, api.tamper = tt.status, answer, tt.tamper
			dst := filepath.Join(t.TempDir(), "answer.json")
			out, _, err := api.call(callOptions{output: dst}, tt.encrypt, nil, "GET")
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err %v, want %q", err, tt.wantErr)
				}
				if _, serr := os.Stat(dst); !os.IsNotExist(serr) {
					t.Fatalf("the file was written: %v", serr)
				}
				return
			}
			got, rerr := os.ReadFile(dst)
			st, _ := os.Stat(dst)
			if err != nil || rerr != nil || !bytes.Equal(got, answer) || out != "" || st.Mode().Perm() != 0o600 {
				t.Fatalf("err %v; file %d bytes (%v), mode %v; stdout %.100q", err, len(got), rerr, st.Mode(), out)
			}
		})
	}
	api := newFakeAPI(t)
	api.answer = answer
	if out, _, err := api.call(callOptions{output: "-"}, true, nil, "GET"); err != nil || out != string(answer) {
		t.Fatalf("-o -: %v, %d bytes", err, len(out))
	}
}

// TestCallHelpExamples: every flag of hdc call is shown in an example, and
// each form of --data.
func TestCallHelpExamples(t *testing.T) {
	cmd := newCallCmd()
	examples := cmd.Example
	cmd.Flags().VisitAll(func(f *pflag.Flag) {
		short := f.Shorthand != "" && strings.Contains(examples, "-"+f.Shorthand+" ")
		if f.Name != "help" && !strings.Contains(examples, "--"+f.Name) && !short {
			t.Errorf("no example with --%s", f.Name)
		}
	})
	for _, s := range []string{"HDC_CLIENT_SECRET=", "HDC_ENCRYPTION_KEY=", "--data '", "--data @", "-d -", "-i ", "-o "} {
		if !strings.Contains(examples, s) {
			t.Errorf("no example with %q", s)
		}
	}
}
