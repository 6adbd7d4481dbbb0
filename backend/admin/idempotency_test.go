package admin

import (
	"net/http"
	"regexp"
	"strings"
	"sync"
	"testing"

	"github.com/health-data-connect/hdc/backend/admin/adminapi"
	"github.com/health-data-connect/hdc/backend/internal/web"
	"github.com/health-data-connect/hdc/backend/store"
)

// TestIdempotencyKey: a change repeated with its key is answered as the
// first time, secret included, and made once; the key with another
// request is refused; another person's key of the same name is theirs.
func TestIdempotencyKey(t *testing.T) {
	t.Parallel()
	a := newAPI(t)
	body := map[string]string{"workspace_id": "w1"}
	first := a.do("operator", "POST", "/admin/v1/clients", body, web.HeaderIdempotencyKey, "k-1")
	var c1, c2 adminapi.Credentials
	first.decode(t, 201, &c1)
	again := a.do("operator", "POST", "/admin/v1/clients", body, web.HeaderIdempotencyKey, "k-1")
	again.decode(t, 201, &c2)
	if c1 != c2 || again.header.Get(web.HeaderReplayed) != "true" || first.header.Get(web.HeaderReplayed) != "" {
		t.Fatalf("the repeat: %+v (replayed %q), want %+v", c2, again.header.Get(web.HeaderReplayed), c1)
	}
	other := a.do("operator", "POST", "/admin/v1/clients", map[string]string{"workspace_id": "w2"}, web.HeaderIdempotencyKey, "k-1")
	if other.status != http.StatusUnprocessableEntity || other.problemCode() != "idempotency_key_reused" {
		t.Fatalf("the key with another body: %d %s", other.status, other.body)
	}
	refusals := []struct {
		name    string
		headers []string
	}{
		{"an empty key", []string{web.HeaderIdempotencyKey, ""}},
		{"a key with a space", []string{web.HeaderIdempotencyKey, "k 1"}},
		{"a key too long", []string{web.HeaderIdempotencyKey, strings.Repeat("k", 256)}},
		{"two keys", []string{web.HeaderIdempotencyKey, "k-2", web.HeaderIdempotencyKey, "k-3"}},
	}
	for _, tt := range refusals {
		if r := a.do("operator", "POST", "/admin/v1/clients", body, tt.headers...); r.status != 400 || r.problemCode() != "invalid_request" {
			t.Errorf("%s: %d %s", tt.name, r.status, r.body)
		}
	}
	list, err := a.st.ListClients(t.Context(), store.ClientFilter{})
	if err != nil || len(list) != 1 {
		t.Fatalf("clients made: %d, %v; want the one", len(list), err)
	}
}

// TestEveryChangeTakesAKey: every route that changes something, from the
// table, answers a request sent again under its Idempotency-Key as the
// first time (here a refusal: no body, ids that do not exist), marked
// replayed; the key with another request is refused.
func TestEveryChangeTakesAKey(t *testing.T) {
	t.Parallel()
	a := newAPI(t)
	pathID := regexp.MustCompile(`\{[a-z_]+\}`)
	for _, rt := range adminapi.Routes() {
		if rt.Method == http.MethodGet {
			continue
		}
		t.Run(rt.Name, func(t *testing.T) {
			path, key := pathID.ReplaceAllString(rt.Path, "none"), "key-of-"+rt.Name
			first := a.do("operator", rt.Method, path, nil, web.HeaderIdempotencyKey, key)
			again := a.do("operator", rt.Method, path, nil, web.HeaderIdempotencyKey, key)
			if first.err != nil || again.err != nil || again.status != first.status || string(again.body) != string(first.body) ||
				again.header.Get(web.HeaderReplayed) != "true" {
				t.Fatalf("the first: %d %s; again: %d %s (replayed %q)", first.status, first.body, again.status, again.body,
					again.header.Get(web.HeaderReplayed))
			}
			other := a.do("operator", rt.Method, path+"?another=request", nil, web.HeaderIdempotencyKey, key)
			if other.status != http.StatusUnprocessableEntity || other.problemCode() != "idempotency_key_reused" {
				t.Fatalf("the key with another request: %d %s", other.status, other.body)
			}
		})
	}
}

// TestIdempotencyKeyConcurrent: the same change sent at once under one
// key is made once; each copy is answered with it, or told to try again.
func TestIdempotencyKeyConcurrent(t *testing.T) {
	t.Parallel()
	a := newAPI(t)
	const copies = 8
	var wg sync.WaitGroup
	replies := make([]reply, copies)
	for i := range copies {
		wg.Go(func() {
			replies[i] = a.do("operator", "POST", "/admin/v1/clients", map[string]string{"workspace_id": "w1"}, web.HeaderIdempotencyKey, "same")
		})
	}
	wg.Wait()
	secrets := map[string]bool{}
	for _, r := range replies {
		switch {
		case r.status == 201:
			var c adminapi.Credentials
			r.decode(t, 201, &c)
			secrets[c.ClientSecret] = true
		case r.status != 409 || r.problemCode() != "idempotency_key_in_use" || r.header.Get("Retry-After") == "":
			t.Fatalf("a copy: %d %s", r.status, r.body)
		}
	}
	list, err := a.st.ListClients(t.Context(), store.ClientFilter{})
	if err != nil || len(list) != 1 || len(secrets) != 1 {
		t.Fatalf("%d clients, %d secrets answered (%v); want one of each", len(list), len(secrets), err)
	}
}
