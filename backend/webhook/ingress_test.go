package webhook

import (
	"errors"
	"strings"
	"testing"

	"github.com/health-data-connect/hdc/internal/strictjson"
)

func TestParseEvent(t *testing.T) {
	tests := []struct {
		name     string
		body     string
		wantData string
		wantErr  error // nil: valid; strictjson.ErrSyntax, ErrUnknownEvent or errOther
	}{
		{"data compacted", `{"type":"receipt.created","workspace_id":"acme","data":{"id": "r1", "n": [1, 2]}}`, `{"id":"r1","n":[1,2]}`, nil},
		{"members in any order", `{"data":{},"workspace_id":"w-1","type":"user.delete"}`, `{}`, nil},
		{"unknown event type", `{"type":"receipt.deleted","workspace_id":"acme","data":{}}`, "", ErrUnknownEvent},
		{"event type case matters", `{"type":"Receipt.Created","workspace_id":"acme","data":{}}`, "", ErrUnknownEvent},
		{"no type", `{"workspace_id":"acme","data":{}}`, "", errOther},
		{"no workspace", `{"type":"user.delete","data":{}}`, "", errOther},
		{"invalid workspace", `{"type":"user.delete","workspace_id":"../etc","data":{}}`, "", errOther},
		{"no data", `{"type":"user.delete","workspace_id":"acme"}`, "", errOther},
		{"null data", `{"type":"user.delete","workspace_id":"acme","data":null}`, "", errOther},
		{"array data", `{"type":"user.delete","workspace_id":"acme","data":[1]}`, "", errOther},
		{"string data", `{"type":"user.delete","workspace_id":"acme","data":"{}"}`, "", errOther},
		{"unknown member", `{"type":"user.delete","workspace_id":"acme","data":{},"id":"x"}`, "", errOther},
		{"duplicate member", `{"type":"user.delete","type":"user.delete","workspace_id":"acme","data":{}}`, "", errOther},
		{"type is a number", `{"type":42,"workspace_id":"acme","data":{}}`, "", strictjson.ErrSyntax},
		{"truncated JSON", `{"type":"user.delete","workspace_id":"acme","data":{}`, "", strictjson.ErrSyntax},
		{"not an object", `[]`, "", strictjson.ErrSyntax},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ev, err := ParseEvent([]byte(tt.body))
			switch {
			case tt.wantErr == nil && err != nil:
				t.Errorf("%s: %v", tt.body, err)
			case tt.wantErr == nil && string(ev.Data) != tt.wantData:
				t.Errorf("%s: data %s, want %s", tt.body, ev.Data, tt.wantData)
			case tt.wantErr == errOther && (err == nil || errors.Is(err, ErrUnknownEvent) || errors.Is(err, strictjson.ErrSyntax)):
				t.Errorf("%s: error %v, want a validation error", tt.body, err)
			case tt.wantErr != nil && tt.wantErr != errOther && !errors.Is(err, tt.wantErr):
				t.Errorf("%s: error %v, want %v", tt.body, err, tt.wantErr)
			}
		})
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
