package adminapi

import (
	"net/url"
	"reflect"
	"testing"
)

// FuzzParseClientQuery: whatever the query, ParseClientQuery returns a
// query within bounds or an error, and what it accepts its Values give
// back.
func FuzzParseClientQuery(f *testing.F) {
	for _, s := range []string{"", "workspace=w1&status=active&limit=2", "cursor=eyJpZCI6IngifQ", "limit=0", "a=1&a=2", "%zz",
		"name_prefix=Clinic%20S&label=env%3Dprod&label=example.org%2Ftier%3Dgold", "label=env", "name_prefix=%00"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		q, err := url.ParseQuery(raw)
		if err != nil {
			return
		}
		cq, err := ParseClientQuery(q)
		if err != nil {
			return
		}
		if cq.Limit < 1 || cq.Limit > MaxLimit || cq.Check() != nil {
			t.Fatalf("%q: %+v accepted", raw, cq)
		}
		if again, err := ParseClientQuery(cq.Values()); err != nil || !reflect.DeepEqual(again, cq) {
			t.Fatalf("%q: %+v, again %+v, %v", raw, cq, again, err)
		}
	})
}

// FuzzParseGrantQuery: likewise for ParseGrantQuery.
func FuzzParseGrantQuery(f *testing.F) {
	for _, s := range []string{"", "workspace=w1&client=c1&status=revoked&limit=2", "status=active", "client=a%2Fb", "limit=1001", "a=1&a=2", "%zz"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		q, err := url.ParseQuery(raw)
		if err != nil {
			return
		}
		gq, err := ParseGrantQuery(q)
		if err != nil {
			return
		}
		if gq.Limit < 1 || gq.Limit > MaxLimit || gq.Check() != nil {
			t.Fatalf("%q: %+v accepted", raw, gq)
		}
		if again, err := ParseGrantQuery(gq.Values()); err != nil || again != gq {
			t.Fatalf("%q: %+v, again %+v, %v", raw, gq, again, err)
		}
	})
}

// FuzzParseSubscriptionQuery: likewise for ParseSubscriptionQuery.
func FuzzParseSubscriptionQuery(f *testing.F) {
	for _, s := range []string{"", "workspace=w1&status=disabled&limit=2", "failing=true", "failing=false&status=active", "failing=1", "status=revoked", "workspace=..", "limit=-1", "a=1&a=2", "%zz"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		q, err := url.ParseQuery(raw)
		if err != nil {
			return
		}
		sq, err := ParseSubscriptionQuery(q)
		if err != nil {
			return
		}
		if sq.Limit < 1 || sq.Limit > MaxLimit || sq.Check() != nil {
			t.Fatalf("%q: %+v accepted", raw, sq)
		}
		if again, err := ParseSubscriptionQuery(sq.Values()); err != nil || again != sq {
			t.Fatalf("%q: %+v, again %+v, %v", raw, sq, again, err)
		}
	})
}

// FuzzParseKeyQuery: likewise for ParseKeyQuery.
func FuzzParseKeyQuery(f *testing.F) {
	for _, s := range []string{"", "client=c1&workspace=w1&status=retiring&limit=2", "cursor=Imsxig", "status=gone", "client=%ff", "limit=1001"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		q, err := url.ParseQuery(raw)
		if err != nil {
			return
		}
		kq, err := ParseKeyQuery(q)
		if err != nil {
			return
		}
		if kq.Limit < 1 || kq.Limit > MaxLimit || kq.Status != "" && !kq.Status.Valid() || kq.Check() != nil {
			t.Fatalf("%q: %+v accepted", raw, kq)
		}
		if again, err := ParseKeyQuery(kq.Values()); err != nil || again != kq {
			t.Fatalf("%q: %+v, again %+v, %v", raw, kq, again, err)
		}
	})
}

// FuzzParsePageQuery: likewise for ParsePageQuery.
func FuzzParsePageQuery(f *testing.F) {
	for _, s := range []string{"", "cursor=x&limit=2", "limit=01", "limit=1000", "page=2", "cursor=a&cursor=b"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		q, err := url.ParseQuery(raw)
		if err != nil {
			return
		}
		pq, err := ParsePageQuery(q)
		if err != nil {
			return
		}
		if pq.Limit < 1 || pq.Limit > MaxLimit || pq.Check() != nil {
			t.Fatalf("%q: %+v accepted", raw, pq)
		}
		if again, err := ParsePageQuery(pq.Values()); err != nil || again != pq {
			t.Fatalf("%q: %+v, again %+v, %v", raw, pq, again, err)
		}
	})
}
