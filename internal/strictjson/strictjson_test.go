package strictjson

import (
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"
)

type login struct {
	ClientID string   `json:"client_id"`
	Secret   string   `json:"client_secret"`
	Names    []string `json:"names,omitempty"`
	Ignored  string   `json:"-"`
	Plain    int
	Inner    *inner            `json:"inner,omitempty"`
	List     []inner           `json:"list,omitempty"`
	Data     json.RawMessage   `json:"data,omitempty"`
	Labels   map[string]string `json:"labels,omitempty"`
	When     time.Time         `json:"when,omitzero"`
}

type inner struct {
	Kid string `json:"kid"`
}

var when = time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)

func TestUnmarshal(t *testing.T) {
	tests := []struct {
		name    string
		in      string
		want    login
		wantErr string // substring; "" means success
		invalid bool   // wraps ErrSyntax
	}{
		{name: "two members", in: `{"client_id":"a","client_secret":"b"}`, want: login{ClientID: "a", Secret: "b"}},
		{name: "whitespace, array and untagged field", in: " \n{ \"names\" : [\"x\"] , \"Plain\": 3 }\t", want: login{Names: []string{"x"}, Plain: 3}},
		{name: "empty object", in: `{}`, want: login{}},
		{name: "member name case matters", in: `{"CLIENT_ID":"a"}`, wantErr: `unknown member; the members are Plain, client_id, client_secret, data, inner, labels, list, names, when`},
		{name: "ignored field", in: `{"Ignored":"a"}`, wantErr: `unknown member`},
		{name: "dash member", in: `{"-":"a"}`, wantErr: `unknown member`},
		{name: "made-up member not quoted", in: `{"hunter2-pasted-as-a-name":"a"}`, wantErr: `unknown member`},
		{name: "duplicate member", in: `{"client_id":"a","client_id":"b"}`, wantErr: "appears twice"},
		{name: "second value", in: `{"client_id":"a"} {}`, wantErr: "data after", invalid: true},
		{name: "trailing garbage", in: `{"client_id":"a"}x`, wantErr: "invalid JSON", invalid: true},
		{name: "wrong type", in: `{"client_id":1}`, wantErr: `member "client_id" has the wrong type`, invalid: true},
		{name: "array", in: `[]`, wantErr: "must be a JSON object", invalid: true},
		{name: "null", in: `null`, wantErr: "must be a JSON object", invalid: true},
		{name: "empty input", in: ``, wantErr: "must be a JSON object", invalid: true},
		{name: "trailing comma", in: `{"client_id":"a",}`, wantErr: "invalid JSON", invalid: true},
		{name: "missing colon", in: `{"client_id" "a"}`, wantErr: "invalid JSON", invalid: true},
		{name: "unterminated object", in: `{"client_id":"a"`, wantErr: "invalid JSON", invalid: true},
		{name: "nested case variant", in: `{"inner":{"Kid":"a"}}`, wantErr: "unknown member in inner; the members are kid"},
		{name: "nested duplicate", in: `{"inner":{"kid":"a","kid":"b"}}`, wantErr: `member "kid" appears twice in inner`},
		{name: "duplicate in a list of objects", in: `{"list":[{"kid":"a"},{"kid":"b","kid":"c"}]}`, wantErr: `member "kid" appears twice in list`},
		{name: "duplicate in raw data", in: `{"data":{"x":1,"y":{"z":1,"z":2}}}`, wantErr: "a member appears twice in data"},
		{name: "duplicate in a map", in: `{"labels":{"a":"1","a":"2"}}`, wantErr: "a member appears twice in labels"},
		{name: "nested objects", in: `{"inner":{"kid":"a"},"list":[{"kid":"b"}],"data":{"any":[1,{"x":null}]},"labels":{"a":"1"},"when":"2026-11-22T10:00:00Z"}`,
			want: login{Inner: &inner{Kid: "a"}, List: []inner{{Kid: "b"}}, Data: json.RawMessage(`{"any":[1,{"x":null}]}`), Labels: map[string]string{"a": "1"}, When: when}},
		{name: "control character not quoted", in: `{"client_secret":"hunter2-very-secret` + "\x01" + `"}`, wantErr: "invalid JSON", invalid: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got login
			err := Unmarshal([]byte(tt.in), &got)
			if tt.wantErr == "" {
				if err != nil || !reflect.DeepEqual(got, tt.want) {
					t.Errorf("Unmarshal(%q) = %+v, %v; want %+v", tt.in, got, err, tt.want)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) || errors.Is(err, ErrSyntax) != tt.invalid {
				t.Errorf("Unmarshal(%q) error = %v; want %q (invalid JSON %v)", tt.in, err, tt.wantErr, tt.invalid)
			}
			if err != nil && strings.Contains(err.Error(), "hunter2") {
				t.Errorf("error %q quotes a value or a made-up member name", err)
			}
		})
	}
}

func FuzzUnmarshal(f *testing.F) {
	for _, s := range []string{`{"client_id":"a","names":["b"]}`, `{"Plain":1}`, `{"client_id":"\u0041"}`, `{`, `{"a":1}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		var got login
		if Unmarshal(data, &got) != nil {
			return
		}
		// Whatever the strict decoder accepts, encoding/json decodes the same.
		var want login
		if err := json.Unmarshal(data, &want); err != nil || !reflect.DeepEqual(got, want) {
			t.Fatalf("strict %+v, encoding/json %+v (%v)", got, want, err)
		}
	})
}

func TestUnmarshalEmbedded(t *testing.T) {
	type base struct {
		Kid string `json:"kid"`
	}
	type stored struct {
		base
		Secret string `json:"secret"`
	}
	for _, tt := range []struct {
		name, in string
		want     stored
		wantErr  string
	}{
		{"promoted and own members", `{"kid":"a","secret":"b"}`, stored{base{"a"}, "b"}, ""},
		{"the embedded type's name is no member", `{"base":{"kid":"a"}}`, stored{}, "unknown member; the members are kid, secret"},
		{"a promoted member twice", `{"kid":"a","kid":"b"}`, stored{}, `member "kid" appears twice`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var got stored
			err := Unmarshal([]byte(tt.in), &got)
			if tt.wantErr == "" && (err != nil || got != tt.want) {
				t.Fatalf("Unmarshal = %+v, %v; want %+v", got, err, tt.want)
			}
			if tt.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tt.wantErr)) {
				t.Fatalf("Unmarshal error = %v; want %q", err, tt.wantErr)
			}
		})
	}
}
