package webhook

import (
	"encoding/base64"
	"errors"
	"fmt"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/health-data-connect/hdc/backend/store"
)

// MessageID is the webhook-id of a delivery: the same on every attempt
// and redelivery, so a receiver deduplicates on it.
func MessageID(deliveryID string) string { return "msg_" + deliveryID }

// The delivery log's page sizes.
const (
	DefaultDeliveryPage = 50
	MaxDeliveryPage     = 250
)

// deliveryParams are the query parameters of the delivery log.
var deliveryParams = []string{"cursor", "limit", "status", "event_type", "since", "until"}

// ParseDeliveryQuery reads the query of GET …/subscriptions/{id}/deliveries
// into a filter (its workspace and subscription left to the caller): each
// parameter at most once, none unknown.
func ParseDeliveryQuery(q url.Values) (store.DeliveryFilter, error) {
	f := store.DeliveryFilter{Limit: DefaultDeliveryPage}
	for name, vs := range q {
		if !slices.Contains(deliveryParams, name) {
			return f, fmt.Errorf("unknown query parameter %q; known: %s", name, strings.Join(deliveryParams, ", "))
		}
		if len(vs) != 1 {
			return f, fmt.Errorf("query parameter %q given %d times", name, len(vs))
		}
		if err := setDeliveryParam(&f, name, vs[0]); err != nil {
			return f, err
		}
	}
	if !f.Since.IsZero() && !f.Until.IsZero() && !f.Since.Before(f.Until) {
		return f, errors.New("since must be before until")
	}
	return f, nil
}

// setDeliveryParam sets one parameter of the delivery log's query.
func setDeliveryParam(f *store.DeliveryFilter, name, v string) error {
	var err error
	switch name {
	case "cursor":
		f.Before, err = ParseDeliveryCursor(v)
	case "limit":
		n, perr := strconv.Atoi(v)
		if perr != nil || n < 1 || n > MaxDeliveryPage {
			return fmt.Errorf("limit must be a whole number from 1 to %d", MaxDeliveryPage)
		}
		f.Limit = n
	case "status":
		s := store.DeliveryLogStatus(v)
		if !slices.Contains(DeliveryStatuses, s) {
			return errors.New("status must be one of pending, delivered, failed, given_up")
		}
		f.Status = s
	case "event_type":
		if !slices.Contains(Events, v) {
			return fmt.Errorf("unknown event_type; known events: %s", strings.Join(Events, ", "))
		}
		f.EventType = v
	case "since":
		f.Since, err = parseTime(name, v)
	case "until":
		f.Until, err = parseTime(name, v)
	}
	return err
}

// DeliveryStatuses are the statuses of the delivery log.
var DeliveryStatuses = []store.DeliveryLogStatus{store.DeliveryLogPending, store.DeliveryLogDelivered, store.DeliveryLogFailed, store.DeliveryLogGivenUp}

// parseTime reads an RFC 3339 time parameter.
func parseTime(name, v string) (time.Time, error) {
	t, err := time.Parse(time.RFC3339Nano, v)
	if err != nil || t.Year() < 1970 || t.Year() > 9999 {
		return time.Time{}, fmt.Errorf("%s must be an RFC 3339 time, such as 2026-11-28T23:00:00Z", name)
	}
	return t.UTC(), nil
}

// errCursor is the refusal of a cursor this API did not give.
var errCursor = errors.New("cursor is not one this API gave: pass the next of a page as it was")

// DeliveryCursor is the cursor of the page after the one ending with the
// delivery created at created with id id.
func DeliveryCursor(c store.Cursor) string {
	return base64.RawURLEncoding.EncodeToString([]byte(strconv.FormatInt(c.CreatedAt.UnixMicro(), 10) + "." + c.ID))
}

// ParseDeliveryCursor reads a cursor DeliveryCursor made.
func ParseDeliveryCursor(v string) (store.Cursor, error) {
	raw, err := base64.RawURLEncoding.DecodeString(v)
	if err != nil || len(raw) > 128 {
		return store.Cursor{}, errCursor
	}
	micros, id, ok := strings.Cut(string(raw), ".")
	n, err := strconv.ParseInt(micros, 10, 64)
	if !ok || err != nil || n <= 0 || !validDeliveryID(id) {
		return store.Cursor{}, errCursor
	}
	return store.Cursor{CreatedAt: time.UnixMicro(n).UTC(), ID: id}, nil
}

// validDeliveryID reports whether id could be a delivery's: 1 to 64
// letters, digits, - and _.
func validDeliveryID(id string) bool {
	if id == "" || len(id) > 64 {
		return false
	}
	for _, c := range id {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_') {
			return false
		}
	}
	return true
}
