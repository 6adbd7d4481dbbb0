package admin

import (
	"net/url"
	"reflect"
	"testing"
	"time"

	"github.com/health-data-connect/hdc/backend/audit"
	"github.com/health-data-connect/hdc/backend/audit/audittest"
	"github.com/health-data-connect/hdc/backend/webhook"
	"github.com/health-data-connect/hdc/internal/contract"
)

// FuzzParseClientQuery: whatever the query, ParseClientQuery returns a
// query within bounds or an error, and what it accepts its Values give
// back.
func FuzzParseClientQuery(f *testing.F) {
	for _, s := range []string{"", "workspace=w1&status=active&limit=2", "cursor=" + encodeCursor(clientCursor{ID: "x"}), "limit=0", "a=1&a=2", "%zz"} {
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
		if cq.Limit < 1 || cq.Limit > MaxLimit {
			t.Fatalf("limit %d accepted", cq.Limit)
		}
		again, err := ParseClientQuery(cq.Values())
		if err != nil || again.Workspace != cq.Workspace || again.Status != cq.Status || again.Cursor != cq.Cursor {
			t.Fatalf("%q: %+v, again %+v, %v", raw, cq, again, err)
		}
	})
}

// FuzzParseGrantQuery: whatever the query, ParseGrantQuery returns a
// query within bounds or an error, and what it accepts its Values give
// back.
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
		if gq.Limit < 1 || gq.Limit > MaxLimit {
			t.Fatalf("limit %d accepted", gq.Limit)
		}
		if again, err := ParseGrantQuery(gq.Values()); err != nil || again != gq {
			t.Fatalf("%q: %+v, again %+v, %v", raw, gq, again, err)
		}
	})
}

// FuzzParseSubscriptionQuery: likewise for ParseSubscriptionQuery.
func FuzzParseSubscriptionQuery(f *testing.F) {
	for _, s := range []string{"", "workspace=w1&status=disabled&limit=2", "status=revoked", "workspace=..", "limit=-1", "a=1&a=2", "%zz"} {
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
		if sq.Limit < 1 || sq.Limit > MaxLimit {
			t.Fatalf("limit %d accepted", sq.Limit)
		}
		if again, err := ParseSubscriptionQuery(sq.Values()); err != nil || again != sq {
			t.Fatalf("%q: %+v, again %+v, %v", raw, sq, again, err)
		}
	})
}

// FuzzCursor: a cursor the caller made up decodes or is refused, never
// panics; what decodes encodes back to a cursor that decodes the same.
func FuzzCursor(f *testing.F) {
	f.Add(encodeCursor(clientCursor{ID: "c1"}))
	f.Add(encodeCursor("w1"))
	f.Add("AAAA")
	f.Add("")
	f.Fuzz(func(t *testing.T, cursor string) {
		var c clientCursor
		if err := decodeCursor(cursor, &c); err != nil {
			return
		}
		var again clientCursor
		if err := decodeCursor(encodeCursor(c), &again); err != nil || !again.CreatedAt.Equal(c.CreatedAt) || again.ID != c.ID {
			t.Fatalf("%q: %+v, again %+v, %v", cursor, c, again, err)
		}
	})
}

// FuzzSerial: what Serial accepts is what the audit trail takes as a
// certificate's serial, and Serial of it is itself.
func FuzzSerial(f *testing.F) {
	for _, s := range []string{"0a1b", "serial=0A:1B", "0x00ff", "", "-1", "zz"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		serial, ok := Serial(s)
		if !ok {
			return
		}
		e := audit.Event{At: time.Unix(0, 0), Action: audit.CertificateRevoke, Outcome: audit.Success,
			Entity: audit.Entity{Kind: audit.EntityCertificate, ID: serial}, Person: audittest.Operator}
		if err := e.Validate(); err != nil {
			t.Fatalf("Serial(%q) = %q, which the trail refuses: %v", s, serial, err)
		}
		if again, ok := Serial(serial); !ok || again != serial {
			t.Fatalf("Serial(%q) = %q, and of it %q, %v", s, serial, again, ok)
		}
	})
}

// FuzzParseKeyQuery: whatever the query, ParseKeyQuery returns a query
// within bounds or an error, and what it accepts its Values give back.
func FuzzParseKeyQuery(f *testing.F) {
	for _, s := range []string{"", "client=c1&workspace=w1&status=retiring&limit=2", "cursor=" + encodeCursor("k1"), "status=gone", "client=%ff", "limit=1001"} {
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
		if kq.Limit < 1 || kq.Limit > MaxLimit || kq.Status != "" && !kq.Status.Valid() {
			t.Fatalf("%q: %+v accepted", raw, kq)
		}
		again, err := ParseKeyQuery(kq.Values())
		if err != nil || again != kq {
			t.Fatalf("%q: %+v, again %+v, %v", raw, kq, again, err)
		}
	})
}

// FuzzParseRate: whatever the flag, ParseRate returns a rate that
// SetClientLimits takes, or an error.
func FuzzParseRate(f *testing.F) {
	for _, s := range []string{"writes=100:20", "reads=none", "login=0.5:1", "uploads=1e9:1", "x=1:1", "reads=NaN:1", "reads=:", "="} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		class, r, err := ParseRate(s)
		if err != nil {
			return
		}
		if err := (contract.Limits{Rates: map[contract.RouteClass]contract.Rate{class: r}}).Check(); err != nil {
			t.Fatalf("ParseRate(%q) = %s %+v, which Check refuses: %v", s, class, r, err)
		}
	})
}

// FuzzParseDeliveryQuery: whatever the query, ParseDeliveryQuery returns a
// filter whose query parameters read back the same, or a problem.
func FuzzParseDeliveryQuery(f *testing.F) {
	for _, s := range []string{"", "status=given_up&limit=2", "since=2026-01-01T00:00:00Z&until=2026-02-01T00:00:00Z", "event_type=user.delete", "cursor=x", "limit=0"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		q, err := url.ParseQuery(raw)
		if err != nil {
			return
		}
		df, err := ParseDeliveryQuery(q)
		if err != nil {
			return
		}
		again, err := ParseDeliveryQuery(webhook.DeliveryQueryValues(df))
		if err != nil || !reflect.DeepEqual(again, df) {
			t.Fatalf("%q read back as %+v (%v), was %+v", raw, again, err, df)
		}
	})
}
