package upload

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"io"
	"strings"
	"testing"
	"testing/iotest"
)

func TestJSONFile(t *testing.T) {
	hello := base64.StdEncoding.EncodeToString([]byte("hello, world")) // aGVsbG8sIHdvcmxk
	tests := []struct {
		name, in string
		want     string
		wantErr  string // substring of the *Error; "" means success
	}{
		{"plain", `{"file":"` + hello + `"}`, "hello, world", ""},
		{"whitespace", " \t\r\n{ \"file\" :\n\"" + hello + "\" } \n", "hello, world", ""},
		{"padding", `{"file":"QQ=="}`, "A", ""},
		{"one pad", `{"file":"QUI="}`, "AB", ""},
		{"escaped slash and plus", `{"file":"` + `\/\/8\u002b"}`, "\xff\xff>", ""},
		{"escaped key", `{"fil\u0065":"QQ=="}`, "A", ""},
		{"empty string", `{"file":""}`, "", ""},
		{"escaped padding", `{"file":"QQ\u003d\u003d"}`, "A", ""},

		{"empty object", `{}`, "", `"file" is missing`},
		{"not an object", `["QQ=="]`, "", "invalid JSON"},
		{"empty body", ``, "", "ends early"},
		{"unknown member", `{"name":"x","file":"QQ=="}`, "", `unknown member;`},
		{"member after file", `{"file":"QQ==","name":"x"}`, "", `unknown member;`},
		{"duplicate file", `{"file":"QQ==","file":"QQ=="}`, "", "appears twice"},
		{"file not a string", `{"file":null}`, "", "must be a string"},
		{"file a number", `{"file":12}`, "", "must be a string"},
		{"trailing garbage", `{"file":"QQ=="}x`, "", "data after"},
		{"second object", `{"file":"QQ=="}{}`, "", "data after"},
		{"trailing comma", `{"file":"QQ==",}`, "", "invalid JSON"},
		{"missing colon", `{"file" "QQ=="}`, "", "invalid JSON"},
		{"unterminated string", `{"file":"QQ==`, "", "ends early"},
		{"unterminated object", `{"file":"QQ=="`, "", "ends early"},
		{"newline escape", `{"file":"QQ\n=="}`, "", "not valid standard base64"},
		{"raw newline", "{\"file\":\"QQ\n==\"}", "", "control character"},
		{"space inside", `{"file":"QQ ="}`, "", "not valid standard base64"},
		{"url alphabet", `{"file":"-_8="}`, "", "not valid standard base64"},
		{"unpadded", `{"file":"QQ"}`, "", "not valid standard base64"},
		{"data after padding", `{"file":"QQ==QQ=="}`, "", "not valid standard base64"},
		{"three pads", `{"file":"Q==="}`, "", "not valid standard base64"},
		{"bad escape", `{"file":"\x"}`, "", "invalid escape"},
		{"bad unicode escape", `{"file":"\u00zz"}`, "", "invalid \\u escape"},
		{"non-ASCII escape", `{"file":"\u00e9AAA"}`, "", "not valid standard base64"},
		{"long unknown name", `{"` + strings.Repeat("n", 100) + `":1}`, "", "unknown member;"},
		{"secret as a name", `{"hdc_cs_pasted":"QQ=="}`, "", "unknown member;"},
	}
	readers := map[string]func(io.Reader) io.Reader{
		"whole":    func(r io.Reader) io.Reader { return r },
		"onebyte":  iotest.OneByteReader,
		"halfread": iotest.HalfReader,
	}
	for _, tt := range tests {
		for rname, wrap := range readers {
			t.Run(tt.name+"/"+rname, func(t *testing.T) {
				got, err := io.ReadAll(JSONFile(wrap(strings.NewReader(tt.in))))
				if tt.wantErr == "" {
					if err != nil || string(got) != tt.want {
						t.Fatalf("read %q, %v; want %q", got, err, tt.want)
					}
					return
				}
				var e *Error
				if !errors.As(err, &e) || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("error = %v; want an *Error containing %q", err, tt.wantErr)
				}
				if strings.Contains(err.Error(), "hdc_cs_pasted") {
					t.Fatalf("error %q quotes a member name the client made up", err)
				}
			})
		}
	}
}

func TestJSONFileLarge(t *testing.T) {
	data := make([]byte, 1<<20+7)
	for i := range data {
		data[i] = byte(i * 7)
	}
	enc := base64.StdEncoding.EncodeToString(data)
	// Escape every 1000th character as JSON allows, to cross buffer edges.
	var b strings.Builder
	b.WriteString("{\n  \"file\": \"")
	for i := range len(enc) {
		if i%1000 == 0 {
			b.WriteString(`\u00` + strings.ToUpper(hexByte(enc[i])))
			continue
		}
		b.WriteByte(enc[i])
	}
	b.WriteString("\"\n}\n")
	got, err := io.ReadAll(JSONFile(strings.NewReader(b.String())))
	if err != nil || !bytes.Equal(got, data) {
		t.Fatalf("round trip failed: %v (%d bytes, want %d)", err, len(got), len(data))
	}
}

func hexByte(c byte) string {
	const digits = "0123456789abcdef"
	return string([]byte{digits[c>>4], digits[c&15]})
}

func TestJSONFilePassesReadErrors(t *testing.T) {
	boom := errors.New("connection reset")
	r := io.MultiReader(strings.NewReader(`{"file":"QUJD`), iotest.ErrReader(boom))
	if _, err := io.ReadAll(JSONFile(r)); !errors.Is(err, boom) {
		t.Fatalf("error = %v, want the read error", err)
	}
}

// FuzzJSONFile checks the streaming decoder against encoding/json plus
// encoding/base64 on whole values: whatever it accepts is a JSON object with
// the single member "file" whose base64 decodes to exactly what it produced,
// and every failure is an *Error.
func FuzzJSONFile(f *testing.F) {
	for _, s := range []string{
		`{"file":"aGVsbG8="}`, `{"file":""}`, ` {"file" : "QQ==" } `, `{"fil\u0065":"\/w=="}`,
		`{"file":"QQ==","file":"QQ=="}`, `{"file":"QQ=="}x`, `{"a":1}`, `{"file":"\u002b\u002f=="}`,
		`{"file":"QQ\n=="}`, `{}`, `{"file":"QQ==QQ=="}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		got, err := io.ReadAll(JSONFile(iotest.HalfReader(bytes.NewReader(data))))
		if err != nil {
			var e *Error
			if !errors.As(err, &e) {
				t.Fatalf("error %v (%T) is not an *Error", err, err)
			}
			return
		}
		var obj map[string]json.RawMessage
		if err := json.Unmarshal(data, &obj); err != nil {
			t.Fatalf("accepted invalid JSON: %v", err)
		}
		if _, ok := obj["file"]; !ok || len(obj) != 1 {
			t.Fatalf("accepted members %v", obj)
		}
		var s string
		if err := json.Unmarshal(obj["file"], &s); err != nil {
			t.Fatalf("accepted a non-string file: %v", err)
		}
		want, err := base64.StdEncoding.DecodeString(s)
		if err != nil || strings.ContainsAny(s, "\r\n") {
			t.Fatalf("accepted invalid base64 %q: %v", s, err)
		}
		if !bytes.Equal(got, want) {
			t.Fatalf("decoded %x, want %x", got, want)
		}
	})
}
