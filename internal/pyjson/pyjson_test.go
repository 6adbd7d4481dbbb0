package pyjson

import (
	"encoding/json"
	"reflect"
	"testing"
	"unicode/utf8"
)

// The wants are what Python 3's json.dumps(json.loads(in),
// separators=(',', ':')) printed for each in.
func TestCompact(t *testing.T) {
	for _, tt := range []struct{ name, in, want string }{
		{"order kept", `{"b": 1, "a": {"d": [1, 2], "c": null}}`, `{"b":1,"a":{"d":[1,2],"c":null}}`},
		{"escapes", `"reçu ✓ <&> \"q\" \\ \n\t\u0001 \u007f 😀 /"`, `"re\u00e7u \u2713 <&> \"q\" \\ \n\t\u0001 \u007f \ud83d\ude00 /"`},
		{"an escaped slash", `"a\/b"`, `"a/b"`},
		{"controls", `"\b\f\r\u001f"`, `"\b\f\r\u001f"`},
		{"integers", `[1, -0, 0, 123456789012345678901234567890]`, `[1,0,0,123456789012345678901234567890]`},
		{"floats", `[1.0, 1e5, 12.5, -0.0, 0.1, 1e16, 1e15, 0.0001, 0.00001, 1.5e300, 123456789.123, 1e-7, 2.5E-5]`,
			`[1.0,100000.0,12.5,-0.0,0.1,1e+16,1000000000000000.0,0.0001,1e-05,1.5e+300,123456789.123,1e-07,2.5e-05]`},
		{"out of range", `[1E400, -1e400]`, `[Infinity,-Infinity]`},
		{"literals", `[true, false, null, {}, []]`, `[true,false,null,{},[]]`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Compact([]byte(tt.in))
			if err != nil || string(got) != tt.want {
				t.Fatalf("Compact(%s) = %s, %v; want %s", tt.in, got, err, tt.want)
			}
		})
	}
}

func TestAppendMembers(t *testing.T) {
	for _, tt := range []struct{ name, obj, want string }{
		{"all", `{"a": 1, "b": "é"}`, `,"a":1,"b":"\u00e9"`},
		{"skipped", `{"event": "x", "a": [1], "event_time": {"n": 2}, "z": 0.5}`, `,"a":[1],"z":0.5`},
		{"empty", `{}`, ``},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got, err := AppendMembers(nil, []byte(tt.obj), "event", "event_time")
			if err != nil || string(got) != tt.want {
				t.Fatalf("AppendMembers(%s) = %s, %v; want %s", tt.obj, got, err, tt.want)
			}
		})
	}
	for _, bad := range []string{`[1]`, `"s"`, `{"a":}`, ``} {
		if _, err := AppendMembers(nil, []byte(bad)); err == nil {
			t.Errorf("AppendMembers(%q) accepted", bad)
		}
	}
}

// FuzzCompact: any JSON document is written in ASCII as the same value,
// and writing the result again changes nothing.
func FuzzCompact(f *testing.F) {
	for _, s := range []string{`{"b":1,"a":"é😀"}`, `[1.5e300,1e-7,-0]`, `"<&>\u0000"`, `{"x":{"y":[true,null]}}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		if !json.Valid(in) {
			if _, err := Compact(in); err == nil {
				t.Fatalf("accepted invalid JSON %q", in)
			}
			return
		}
		out, err := Compact(in)
		if err != nil {
			t.Fatalf("Compact(%q): %v", in, err)
		}
		for _, c := range out {
			if c < ' ' || c > '~' {
				t.Fatalf("Compact(%q) = %q: not printable ASCII", in, out)
			}
		}
		if !json.Valid(out) {
			return // Infinity: what Python writes for a number out of range
		}
		var a, b any
		_ = json.Unmarshal(in, &a)
		_ = json.Unmarshal(out, &b)
		if !reflect.DeepEqual(a, b) && utf8.Valid(in) {
			t.Fatalf("Compact(%q) = %q: another value", in, out)
		}
		again, err := Compact(out)
		if err != nil || string(again) != string(out) {
			t.Fatalf("Compact(%q) = %q, %v; again %q", in, out, err, again)
		}
	})
}
