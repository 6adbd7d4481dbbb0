package webhook

import (
	"net/url"
	"testing"
	"time"

	"github.com/health-data-connect/hdc/backend/store"
)

// TestParseDeliveryQuery: the log's parameters, each once, none unknown.
func TestParseDeliveryQuery(t *testing.T) {
	t.Parallel()
	cur := store.Cursor{CreatedAt: time.Date(2026, 11, 28, 23, 0, 0, 1000, time.UTC), ID: "abc123"}
	tests := []struct {
		query string
		ok    bool
		check func(store.DeliveryFilter) bool
	}{
		{"", true, func(f store.DeliveryFilter) bool { return f.Limit == DefaultDeliveryPage && f.Status == "" }},
		{"limit=250&status=given_up&event_type=user.delete", true, func(f store.DeliveryFilter) bool {
			return f.Limit == 250 && f.Status == store.DeliveryLogGivenUp && f.EventType == "user.delete"
		}},
		{"since=2026-11-28T22:00:00%2B01:00&until=2026-11-28T23:00:00Z", true, func(f store.DeliveryFilter) bool {
			return f.Since.Equal(time.Date(2026, 11, 28, 21, 0, 0, 0, time.UTC)) && f.Until.Location() == time.UTC
		}},
		{"cursor=" + DeliveryCursor(cur), true, func(f store.DeliveryFilter) bool { return f.Before == cur }},
		{"limit=251", false, nil},
		{"limit=-1", false, nil},
		{"limit=1&limit=2", false, nil},
		{"status=canceled", false, nil},
		{"event_type=nope", false, nil},
		{"since=2026-11-28", false, nil},
		{"since=2026-11-28T23:00:00Z&until=2026-11-28T22:00:00Z", false, nil},
		{"cursor=bm9wZQ", false, nil},
		{"cursor=MTIzLmEvYg", false, nil}, // "123.a/b"
		{"offset=10", false, nil},
	}
	for _, tt := range tests {
		t.Run(tt.query, func(t *testing.T) {
			t.Parallel()
			q, err := url.ParseQuery(tt.query)
			if err != nil {
				t.Fatal(err)
			}
			f, err := ParseDeliveryQuery(q)
			if (err == nil) != tt.ok || tt.ok && !tt.check(f) {
				t.Fatalf("ParseDeliveryQuery(%q) = %+v, %v", tt.query, f, err)
			}
		})
	}
}

// FuzzParseDeliveryQuery: any query is parsed or refused, never a panic;
// a filter parsed is within bounds, and a cursor parsed round-trips.
func FuzzParseDeliveryQuery(f *testing.F) {
	f.Add("limit=10&status=failed&since=2026-11-28T22:00:00Z")
	f.Add("cursor=" + DeliveryCursor(store.Cursor{CreatedAt: time.UnixMicro(1), ID: "x"}))
	f.Add("event_type=user.delete&until=9999-12-31T23:59:59.999999999Z")
	f.Fuzz(func(t *testing.T, query string) {
		q, err := url.ParseQuery(query)
		if err != nil {
			return
		}
		flt, err := ParseDeliveryQuery(q)
		if err != nil {
			return
		}
		if flt.Limit < 1 || flt.Limit > MaxDeliveryPage {
			t.Fatalf("limit %d out of bounds", flt.Limit)
		}
		if !flt.Before.CreatedAt.IsZero() {
			again, err := ParseDeliveryCursor(DeliveryCursor(flt.Before))
			if err != nil || again != flt.Before {
				t.Fatalf("cursor %+v does not round-trip: %+v, %v", flt.Before, again, err)
			}
		}
	})
}
