package webhook

import (
	"errors"
	"strings"
	"testing"

	"github.com/health-data-connect/hdc/backend/internal/web"
)

func TestParseEvent(t *testing.T) {
	tests := []struct {
		body     string
		wantData string
		wantErr  error // nil: valid; web.ErrInvalidJSON, ErrUnknownEvent or errOther
	}{
		{`{"type":"receipt.created","workspace_id":"acme","data":{"id": "r1", "n": [1, 2]}}`, `{"id":"r1","n":[1,2]}`, nil},
		{`{"data":{},"workspace_id":"w-1","type":"user.delete"}`, `{}`, nil},
		{`{"type":"receipt.deleted","workspace_id":"acme","data":{}}`, "", ErrUnknownEvent},
		{`{"type":"Receipt.Created","workspace_id":"acme","data":{}}`, "", ErrUnknownEvent},
		{`{"workspace_id":"acme","data":{}}`, "", errOther},
		{`{"type":"user.delete","data":{}}`, "", errOther},
		{`{"type":"user.delete","workspace_id":"../etc","data":{}}`, "", errOther},
		{`{"type":"user.delete","workspace_id":"acme"}`, "", errOther},
		{`{"type":"user.delete","workspace_id":"acme","data":null}`, "", errOther},
		{`{"type":"user.delete","workspace_id":"acme","data":[1]}`, "", errOther},
		{`{"type":"user.delete","workspace_id":"acme","data":"{}"}`, "", errOther},
		{`{"type":"user.delete","workspace_id":"acme","data":{},"id":"x"}`, "", errOther},
		{`{"type":"user.delete","type":"user.delete","workspace_id":"acme","data":{}}`, "", errOther},
		{`{"type":42,"workspace_id":"acme","data":{}}`, "", web.ErrInvalidJSON},
		{`{"type":"user.delete","workspace_id":"acme","data":{}`, "", web.ErrInvalidJSON},
		{`[]`, "", web.ErrInvalidJSON},
	}
	for _, tt := range tests {
		ev, err := ParseEvent([]byte(tt.body))
		switch {
		case tt.wantErr == nil && err != nil:
			t.Errorf("%s: %v", tt.body, err)
		case tt.wantErr == nil && string(ev.Data) != tt.wantData:
			t.Errorf("%s: data %s, want %s", tt.body, ev.Data, tt.wantData)
		case tt.wantErr == errOther && (err == nil || errors.Is(err, ErrUnknownEvent) || errors.Is(err, web.ErrInvalidJSON)):
			t.Errorf("%s: error %v, want a validation error", tt.body, err)
		case tt.wantErr != nil && tt.wantErr != errOther && !errors.Is(err, tt.wantErr):
			t.Errorf("%s: error %v, want %v", tt.body, err, tt.wantErr)
		}
	}
}

// errOther stands for a validation error that is neither unknown_event nor
// invalid_json.
var errOther = errors.New("other")

func FuzzParseEvent(f *testing.F) {
	f.Add([]byte(`{"type":"receipt.created","workspace_id":"acme","data":{"a":[1,{"b":null}]}}`))
	f.Add([]byte(`{"type":"user.delete","workspace_id":"w","data":{}}`))
	f.Add([]byte(`{"type":"x","workspace_id":"","data":[]}`))
	f.Fuzz(func(t *testing.T, body []byte) {
		ev, err := ParseEvent(body)
		if err != nil {
			if strings.Contains(err.Error(), "\n") {
				t.Fatalf("multi-line error %q", err)
			}
			return
		}
		if len(ev.Data) == 0 || ev.Data[0] != '{' || ev.Type == "" || ev.WorkspaceID == "" {
			t.Fatalf("accepted %q as %+v", body, ev)
		}
		// What was accepted round-trips: the data is a compact JSON object.
		again, err := ParseEvent([]byte(`{"type":"` + ev.Type + `","workspace_id":"` + ev.WorkspaceID + `","data":` + string(ev.Data) + `}`))
		if err != nil || string(again.Data) != string(ev.Data) {
			t.Fatalf("data %s does not round-trip: %v", ev.Data, err)
		}
	})
}
