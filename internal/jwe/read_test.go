package jwe

import (
	"bytes"
	"errors"
	"strings"
	"testing"
)

// envelopeJSON builds a flattened envelope from member texts, in order.
func envelopeJSON(members ...string) []byte {
	return []byte("{" + strings.Join(members, ",") + "}")
}

func member(name, value string) string { return `"` + name + `":"` + value + `"` }

func headerB64(h string) string { return b64.EncodeToString([]byte(h)) }

// TestReadRejects walks every check made before any key is touched: each
// envelope must fail with a *FormatError (or ErrTooLarge), whatever the key.
func TestReadRejects(t *testing.T) {
	v := loadVectors(t).Request.Envelope
	prot, iv, ct, tag, kid := member("protected", v["protected"]), member("iv", v["iv"]),
		member("ciphertext", v["ciphertext"]), member("tag", v["tag"]), member("kid", v["kid"])
	withHeader := func(h string) string { return member("protected", headerB64(h)) }
	tests := []struct {
		name string
		form Form
		data string
	}{
		{"empty body", Request, ""},
		{"not an object", Request, `[]`},
		{"string", Request, `"x"`},
		{"bad JSON", Request, `{"protected":`},
		{"unterminated", Request, `{` + prot},
		{"trailing data", Request, string(envelopeJSON(prot, iv, ct, tag, kid)) + `{}`},
		{"trailing comma", Request, `{` + prot + `,` + iv + `,` + ct + `,` + tag + `,}`},
		{"missing colon", Request, `{"protected" "x"}`},
		{"duplicate iv", Request, string(envelopeJSON(prot, iv, iv, ct, tag))},
		{"duplicate ciphertext", Request, string(envelopeJSON(prot, iv, ct, ct, tag))},
		{"duplicate via escape", Request, string(envelopeJSON(prot, iv, ct, tag, `"\u0074ag":"`+v["tag"]+`"`))},
		{"duplicate kid", Request, string(envelopeJSON(prot, iv, ct, tag, kid, kid))},
		{"unknown member", Request, string(envelopeJSON(prot, iv, ct, tag, member("x", "y")))},
		{"aad member", Request, string(envelopeJSON(prot, iv, ct, tag, member("aad", "AAAA")))},
		{"no recipients", Request, string(envelopeJSON(prot, iv, ct, tag, `"recipients":[]`))},
		{"two recipients", Request, string(envelopeJSON(prot, iv, ct, tag, `"recipients":[{},{}]`))},
		{"recipients not an array", Request, string(envelopeJSON(prot, iv, ct, tag, `"recipients":{}`))},
		{"recipient with a key", Request, string(envelopeJSON(prot, iv, ct, tag, `"recipients":[{"encrypted_key":"AAAA"}]`))},
		{"recipient with other members", Request, string(envelopeJSON(prot, iv, ct, tag, `"recipients":[{"iv":"AAAA"}]`))},
		{"recipient header and top-level header", Request, string(envelopeJSON(prot, iv, ct, tag, `"header":{}`, `"recipients":[{"header":{}}]`))},
		{"recipient alg repeated", Request, string(envelopeJSON(prot, iv, ct, tag, `"recipients":[{"header":{"alg":"dir"}}]`))},
		{"missing protected", Request, string(envelopeJSON(iv, ct, tag, kid))},
		{"missing iv", Request, string(envelopeJSON(prot, ct, tag))},
		{"missing tag", Request, string(envelopeJSON(prot, iv, ct))},
		{"missing ciphertext", Request, string(envelopeJSON(prot, iv, tag))},
		{"iv not a string", Request, string(envelopeJSON(prot, `"iv":1`, ct, tag))},
		{"kid not a string", Request, string(envelopeJSON(prot, iv, ct, tag, `"kid":null`))},
		{"padded iv", Request, string(envelopeJSON(prot, member("iv", v["iv"]+"=="), ct, tag))},
		{"padded tag", Request, string(envelopeJSON(prot, iv, ct, member("tag", v["tag"]+"==")))},
		{"padded ciphertext", Request, string(envelopeJSON(prot, iv, member("ciphertext", v["ciphertext"]+"="), tag))},
		{"standard alphabet", Request, string(envelopeJSON(prot, iv, member("ciphertext", strings.ReplaceAll(v["ciphertext"], "_", "/")), tag))},
		{"newline in ciphertext", Request, string(envelopeJSON(prot, iv, member("ciphertext", v["ciphertext"][:8]+`\n`+v["ciphertext"][8:]), tag))},
		{"raw newline in ciphertext", Request, string(envelopeJSON(prot, iv, member("ciphertext", v["ciphertext"][:8]+"\n"+v["ciphertext"][8:]), tag))},
		{"raw CR in ciphertext", Request, string(envelopeJSON(prot, iv, member("ciphertext", v["ciphertext"][:5]+"\r"+v["ciphertext"][5:]), tag))},
		{"raw newline ending the ciphertext", Request, string(envelopeJSON(prot, iv, member("ciphertext", v["ciphertext"]+"\n"), tag))},
		{"raw CR LF ending the ciphertext", Request, string(envelopeJSON(prot, iv, member("ciphertext", v["ciphertext"]+"\r\n"), tag))},
		{"raw newline in iv", Request, string(envelopeJSON(prot, member("iv", v["iv"][:3]+"\n"+v["iv"][3:]), ct, tag))},
		{"raw newline ending the tag", Request, string(envelopeJSON(prot, iv, ct, member("tag", v["tag"]+"\n")))},
		{"escape in iv", Request, string(envelopeJSON(prot, member("iv", `\u0041`+v["iv"][1:]), ct, tag))},
		{"non-zero trailing bits", Request, string(envelopeJSON(prot, member("iv", v["iv"][:21]+"x"), ct, tag))},
		{"short iv", Request, string(envelopeJSON(prot, member("iv", b64.EncodeToString(make([]byte, 12))), ct, tag))},
		{"long iv", Request, string(envelopeJSON(prot, member("iv", b64.EncodeToString(make([]byte, 17))), ct, tag))},
		{"short tag", Request, string(envelopeJSON(prot, iv, ct, member("tag", b64.EncodeToString(make([]byte, 15)))))},
		{"long tag", Request, string(envelopeJSON(prot, iv, ct, member("tag", b64.EncodeToString(make([]byte, 32)))))},
		{"empty ciphertext", Request, string(envelopeJSON(prot, iv, member("ciphertext", ""), tag))},
		{"truncated ciphertext", Request, string(envelopeJSON(prot, iv, member("ciphertext", b64.EncodeToString(make([]byte, 31))), tag))},
		{"encrypted key", Request, string(envelopeJSON(prot, member("encrypted_key", "AAAA"), iv, ct, tag))},
		{"alg A128KW", Request, string(envelopeJSON(withHeader(`{"alg":"A128KW","enc":"A128CBC-HS256"}`), iv, ct, tag))},
		{"alg none", Request, string(envelopeJSON(withHeader(`{"alg":"none","enc":"A128CBC-HS256"}`), iv, ct, tag))},
		{"enc A256GCM", Request, string(envelopeJSON(withHeader(`{"alg":"dir","enc":"A256GCM"}`), iv, ct, tag))},
		{"missing enc", Request, string(envelopeJSON(withHeader(`{"alg":"dir"}`), iv, ct, tag))},
		{"zip", Request, string(envelopeJSON(withHeader(`{"alg":"dir","enc":"A128CBC-HS256","zip":"DEF"}`), iv, ct, tag))},
		{"crit", Request, string(envelopeJSON(withHeader(`{"alg":"dir","enc":"A128CBC-HS256","crit":["exp"],"exp":1}`), iv, ct, tag))},
		{"unknown header parameter", Request, string(envelopeJSON(withHeader(`{"alg":"dir","enc":"A128CBC-HS256","p2s":"x"}`), iv, ct, tag))},
		{"duplicate header parameter", Request, string(envelopeJSON(withHeader(`{"alg":"dir","alg":"dir","enc":"A128CBC-HS256"}`), iv, ct, tag))},
		{"header not JSON", Request, string(envelopeJSON(withHeader(`alg=dir`), iv, ct, tag))},
		{"header trailing data", Request, string(envelopeJSON(withHeader(`{"alg":"dir","enc":"A128CBC-HS256"}x`), iv, ct, tag))},
		{"header number value", Request, string(envelopeJSON(withHeader(`{"alg":"dir","enc":"A128CBC-HS256","kid":7}`), iv, ct, tag))},
		{"header invalid UTF-8", Request, string(envelopeJSON(withHeader("{\"alg\":\"dir\",\"enc\":\"A128CBC-HS256\",\"kid\":\"\xff\"}"), iv, ct, tag))},
		{"kid disagrees with header", Request, string(envelopeJSON(withHeader(`{"alg":"dir","enc":"A128CBC-HS256","kid":"a"}`), iv, ct, tag, member("kid", "b")))},
		{"alg in unprotected", Request, string(envelopeJSON(prot, iv, ct, tag, `"unprotected":{"alg":"dir"}`))},
		{"unprotected kid disagrees", Request, string(envelopeJSON(prot, iv, ct, tag, kid, `"header":{"kid":"other"}`))},
		{"deep nesting", Request, string(envelopeJSON(prot, iv, ct, tag, `"unprotected":`+strings.Repeat("[", 5000)))},
		{"unprotected not an object", Request, string(envelopeJSON(prot, iv, ct, tag, `"unprotected":"kid"`))},
		{"control character", Request, string(envelopeJSON(prot, iv, ct, tag, member("kid", "a\x01b")))},
		{"long member name", Request, string(envelopeJSON(prot, iv, ct, tag, member(strings.Repeat("n", 100), "x")))},
		{"response header has zip", Flattened, string(envelopeJSON(iv, ct, tag, `"unprotected":{"alg":"dir","enc":"A128CBC-HS256","zip":"DEF"}`))},
		{"response wrong enc", Flattened, string(envelopeJSON(iv, ct, tag, `"unprotected":{"alg":"dir","enc":"A256GCM"}`))},
		{"compact with four parts", Compact, v["protected"] + ".." + v["iv"] + "." + v["ciphertext"]},
		{"compact with six parts", Compact, v["protected"] + ".." + v["iv"] + "." + v["ciphertext"] + "." + v["tag"] + ".x"},
		{"compact with two parts", Compact, v["protected"] + "." + v["iv"]},
		{"compact encrypted key", Compact, v["protected"] + ".AAAA." + v["iv"] + "." + v["ciphertext"] + "." + v["tag"]},
		{"compact padded tag", Compact, v["protected"] + ".." + v["iv"] + "." + v["ciphertext"] + "." + v["tag"] + "=="},
		{"compact JSON body", Compact, string(envelopeJSON(prot, iv, ct, tag))},
		{"compact trailing garbage", Compact, v["protected"] + ".." + v["iv"] + "." + v["ciphertext"] + "." + v["tag"] + " x"},
		{"compact wrong alg", Compact, headerB64(`{"alg":"A128KW","enc":"A128CBC-HS256"}`) + ".." + v["iv"] + "." + v["ciphertext"] + "." + v["tag"]},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e, _, err := Parse([]byte(tt.data), tt.form)
			var fe *FormatError
			if !errors.As(err, &fe) && !errors.Is(err, ErrTooLarge) {
				t.Fatalf("Parse = %+v, %v; want a format error", e, err)
			}
		})
	}
}

// TestReadAccepts covers well-formed variants: whitespace, member order,
// kid in the header and unprotected headers, escapes in names and kid.
func TestReadAccepts(t *testing.T) {
	v := loadVectors(t).Request
	e := v.Envelope
	prot, iv, ct, tag := member("protected", e["protected"]), member("iv", e["iv"]), member("ciphertext", e["ciphertext"]), member("tag", e["tag"])
	tests := []struct {
		name    string
		data    string
		wantKid string
	}{
		{"reordered", string(envelopeJSON(tag, ct, iv, prot)), ""},
		{"whitespace", " {\n\t" + prot + " ,\r\n" + iv + " , " + ct + ",\n" + tag + "\n} \n", ""},
		{"escaped member name", string(envelopeJSON(prot, iv, ct, `"\u0074ag":"`+e["tag"]+`"`)), ""},
		{"escaped kid", string(envelopeJSON(prot, iv, ct, tag, `"kid":"client\u002d1"`)), "client-1"},
		{"kid in unprotected", string(envelopeJSON(prot, iv, ct, tag, `"unprotected":{"kid":"k"}`)), "k"},
		{"kid in header and top level", string(envelopeJSON(prot, iv, ct, tag, `"header":{"kid":"k"}`, member("kid", "k"))), "k"},
		{"empty encrypted key", string(envelopeJSON(prot, member("encrypted_key", ""), iv, ct, tag)), ""},
		{"general syntax", string(envelopeJSON(prot, iv, ct, tag, `"recipients":[{}]`)), ""},
		{"general syntax as authlib writes it", string(envelopeJSON(prot, `"recipients":[{"header":{"kid":"k"},"encrypted_key":""}]`, iv, ct, tag)), "k"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			env, ciphertext, err := Parse([]byte(tt.data), Request)
			if err != nil {
				t.Fatal(err)
			}
			if env.Kid != tt.wantKid {
				t.Fatalf("kid = %q, want %q", env.Kid, tt.wantKid)
			}
			pt, err := env.Decrypt(v.key(t), ciphertext)
			if err != nil || string(pt) != v.PlaintextUTF8 {
				t.Fatalf("Decrypt = %q, %v", pt, err)
			}
			pt, err = env.DecryptInPlace(v.key(t), ciphertext)
			if err != nil || string(pt) != v.PlaintextUTF8 || &pt[0] != &ciphertext[0] {
				t.Fatalf("DecryptInPlace = %q, %v (in place: %t)", pt, err, err == nil && &pt[0] == &ciphertext[0])
			}
		})
	}
}

func TestReadLimit(t *testing.T) {
	data := loadVectors(t).Request.json(t)
	var ct bytes.Buffer
	if _, err := Read(bytes.NewReader(data), Request, &ct, int64(len(data))); err != nil {
		t.Fatalf("at the limit: %v", err)
	}
	for _, limit := range []int64{0, 1, int64(len(data)) - 1} {
		ct.Reset()
		if _, err := Read(bytes.NewReader(data), Request, &ct, limit); !errors.Is(err, ErrTooLarge) {
			t.Fatalf("limit %d: err = %v, want ErrTooLarge", limit, err)
		}
	}
}

// TestBitFlips flips every bit of the decoded iv, ciphertext, tag and
// protected header of a valid envelope. Each flip must fail; a flip in iv,
// ciphertext or tag must fail with exactly ErrDecrypt, and so must a flip in
// the protected header that still leaves a well-formed header. (In the
// vector's compact header every flip breaks the JSON or the alg/enc values,
// so those are format errors; cbchmac.TestDecryptFailuresUniform covers a header that
// changes and stays well-formed.)
func TestBitFlips(t *testing.T) {
	vec := loadVectors(t).Request
	key := vec.key(t)
	for _, name := range []string{"protected", "iv", "ciphertext", "tag"} {
		raw := unb64(t, vec.Envelope[name])
		var formatErrs, decryptErrs int
		for bit := 0; bit < len(raw)*8; bit++ {
			flipped := bytes.Clone(raw)
			flipped[bit/8] ^= 1 << (bit % 8)
			env := map[string]string{}
			for k, v := range vec.Envelope {
				env[k] = v
			}
			env[name] = b64.EncodeToString(flipped)
			data := envelopeVector{Envelope: env}.json(t)
			e, ct, err := Parse(data, Request)
			if err == nil {
				_, err = e.Decrypt(key, ct)
			}
			var fe *FormatError
			switch {
			case err == ErrDecrypt:
				decryptErrs++
			case name == "protected" && errors.As(err, &fe):
				formatErrs++
			default:
				t.Fatalf("%s bit %d: err = %v", name, bit, err)
			}
		}
		if name != "protected" && decryptErrs != len(raw)*8 {
			t.Fatalf("%s: %d of %d flips gave ErrDecrypt", name, decryptErrs, len(raw)*8)
		}
		t.Logf("%s: %d flips → ErrDecrypt, %d → format error", name, decryptErrs, formatErrs)
	}
}

// TestRefusalsNameTheParameter checks that a refused header says which
// parameter and why, so that a client library's default can be recognized.
func TestRefusalsNameTheParameter(t *testing.T) {
	v := loadVectors(t).Request.Envelope
	prot, iv, ct, tag := member("protected", v["protected"]), member("iv", v["iv"]), member("ciphertext", v["ciphertext"]), member("tag", v["tag"])
	tests := []struct {
		name string
		data string
		want []string
	}{
		{"alg repeated per recipient", string(envelopeJSON(prot, iv, ct, tag, `"recipients":[{"header":{"alg":"dir"}}]`)),
			[]string{`"alg"`, "protected header", "§7.2.1"}},
		{"enc repeated unprotected", string(envelopeJSON(prot, iv, ct, tag, `"unprotected":{"enc":"A128CBC-HS256"}`)),
			[]string{`"enc"`, "§7.2.1"}},
		{"typ only unprotected", string(envelopeJSON(prot, iv, ct, tag, `"header":{"typ":"JWE"}`)),
			[]string{`"typ"`, "only be in the protected header"}},
		{"unknown parameter", string(envelopeJSON(member("protected", headerB64(`{"alg":"dir","enc":"A128CBC-HS256","p2s":"x"}`)), iv, ct, tag)),
			[]string{`"p2s"`, "not supported"}},
		{"two recipients", string(envelopeJSON(prot, iv, ct, tag, `"recipients":[{},{}]`)),
			[]string{"one recipient"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, _, err := Parse([]byte(tt.data), Request)
			var fe *FormatError
			if !errors.As(err, &fe) {
				t.Fatalf("Parse: %v; want a format error", err)
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not mention %q", err, w)
				}
			}
		})
	}
}

// TestFreshnessMembers reads iat and jti from the protected header: iat a
// positive whole number of seconds, jti a string, both there alone.
func TestFreshnessMembers(t *testing.T) {
	for _, tt := range []struct {
		name, header string
		iat          int64
		jti          string
		err          bool
	}{
		{name: "both", header: `{"alg":"dir","enc":"A256GCM","kid":"k","iat":1795000000,"jti":"a-request-id-0001"}`, iat: 1795000000, jti: "a-request-id-0001"},
		{name: "neither", header: `{"alg":"dir","enc":"A256GCM","kid":"k"}`},
		{name: "iat then a member", header: `{"iat":7,"alg":"dir","enc":"A256GCM","kid":"k"}`, iat: 7},
		{name: "fraction", header: `{"alg":"dir","enc":"A256GCM","iat":1795000000.5}`, err: true},
		{name: "exponent", header: `{"alg":"dir","enc":"A256GCM","iat":1e9}`, err: true},
		{name: "negative", header: `{"alg":"dir","enc":"A256GCM","iat":-1}`, err: true},
		{name: "zero", header: `{"alg":"dir","enc":"A256GCM","iat":0}`, err: true},
		{name: "leading zero", header: `{"alg":"dir","enc":"A256GCM","iat":01}`, err: true},
		{name: "thirteen digits", header: `{"alg":"dir","enc":"A256GCM","iat":1795000000000}`, err: true},
		{name: "a string", header: `{"alg":"dir","enc":"A256GCM","iat":"1795000000"}`, err: true},
		{name: "twice", header: `{"alg":"dir","enc":"A256GCM","iat":1,"iat":2}`, err: true},
		{name: "jti a number", header: `{"alg":"dir","enc":"A256GCM","jti":1}`, err: true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			h, err := parseHeader([]byte(tt.header))
			if (err != nil) != tt.err {
				t.Fatalf("parseHeader(%s) = %v", tt.header, err)
			}
			if err == nil && (h.Iat != tt.iat || h.Jti != tt.jti) {
				t.Fatalf("iat, jti = %d, %q; want %d, %q", h.Iat, h.Jti, tt.iat, tt.jti)
			}
		})
	}
}

// TestEncOfTheKey refuses an envelope opened with a key of another enc
// with ErrDecrypt, in memory and as a stream, whatever the tag.
func TestEncOfTheKey(t *testing.T) {
	keys := testKeys(t)
	for i, tk := range keys {
		other := keys[1-i].key
		env := EncryptRequest(tk.key, Protected{Kid: "k"}, []byte(`{"a":1}`))
		e, ct, err := Parse(env, Request)
		if err != nil {
			t.Fatal(err)
		}
		t.Run(string(tk.enc), func(t *testing.T) {
			if _, err := e.Decrypt(other, ct); err != ErrDecrypt {
				t.Fatalf("Decrypt under a key of another enc: %v", err)
			}
			if _, _, err := e.Open(other, bytes.NewReader(ct)); err != ErrDecrypt {
				t.Fatalf("Open under a key of another enc: %v", err)
			}
			if _, err := e.Decrypt(DummyKey(tk.key.Enc()), ct); err != ErrDecrypt {
				t.Fatalf("Decrypt under a dummy key: %v", err)
			}
			if pt, err := e.Decrypt(tk.key, ct); err != nil || string(pt) != `{"a":1}` {
				t.Fatalf("Decrypt under its key: %q, %v", pt, err)
			}
		})
	}
}
