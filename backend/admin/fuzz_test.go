package admin

import (
	"net/url"
	"reflect"
	"strconv"
	"testing"
	"time"

	"github.com/health-data-connect/hdc/backend/admin/adminapi"
	"github.com/health-data-connect/hdc/backend/audit"
	"github.com/health-data-connect/hdc/backend/audit/audittest"
	"github.com/health-data-connect/hdc/internal/problem"
)

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

// FuzzDeliveryFilter: whatever the query, deliveryFilter reads it or
// refuses it with a problem, and a DeliveryQuery of the same parameters,
// as a caller of the API gives them, reads as the same filter.
func FuzzDeliveryFilter(f *testing.F) {
	for _, s := range []string{"", "status=given_up&limit=2", "since=2026-01-01T00:00:00Z&until=2026-02-01T00:00:00Z", "event_type=user.delete", "cursor=x", "limit=0"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		q, err := url.ParseQuery(raw)
		if err != nil {
			return
		}
		df, err := deliveryFilter(q)
		if err != nil {
			if _, ok := err.(*problem.Problem); !ok {
				t.Fatalf("%q: %v is no problem", raw, err)
			}
			return
		}
		dq := adminapi.DeliveryQuery{Status: q.Get("status"), EventType: q.Get("event_type"), Since: q.Get("since"), Until: q.Get("until"),
			Cursor: q.Get("cursor")}
		dq.Limit, _ = strconv.Atoi(q.Get("limit"))
		again, err := deliveryFilter(dq.Values())
		if err != nil || !reflect.DeepEqual(again, df) {
			t.Fatalf("%q read back as %+v (%v), was %+v", raw, again, err, df)
		}
	})
}
