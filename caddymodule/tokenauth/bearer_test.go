package tokenauth

import (
	"errors"
	"regexp"
	"strings"
	"testing"
)

func TestBearerToken(t *testing.T) {
	const tok = "eyJhbGciOiJFZERTQSJ9.eyJzdWIiOiJjIn0.c2ln"
	tests := []struct {
		name   string
		header string
		want   string
		err    error
	}{
		{"bearer token", "Bearer " + tok, tok, nil},
		{"lower-case scheme", "bearer " + tok, tok, nil},
		{"upper-case scheme", "BEARER " + tok, tok, nil},
		{"all token68 characters", "Bearer abc+/~_-.==", "abc+/~_-.==", nil},
		{"no header", "", "", ErrMissing},
		{"scheme only", "Bearer", "", ErrMalformed},
		{"empty token", "Bearer ", "", ErrMalformed},
		{"two spaces", "Bearer  " + tok, "", ErrMalformed},
		{"trailing space", "Bearer " + tok + " ", "", ErrMalformed},
		{"extra word", "Bearer " + tok + " extra", "", ErrMalformed},
		{"tab separator", "Bearer\t" + tok, "", ErrMalformed},
		{"leading space", " Bearer " + tok, "", ErrMalformed},
		{"basic scheme", "Basic dXNlcjpwYXNz", "", ErrMalformed},
		{"colon separator", "Bearer:" + tok, "", ErrMalformed},
		{"scheme run into token", "Bearertoken " + tok, "", ErrMalformed},
		{"no scheme", tok, "", ErrMalformed},
		{"padding only", "Bearer ===", "", ErrMalformed},
		{"padding inside", "Bearer a=b", "", ErrMalformed},
		{"two tokens", "Bearer " + tok + ",Bearer " + tok, "", ErrMalformed},
		{"non-ASCII token", "Bearer tök", "", ErrMalformed},
		{"largest token", "Bearer " + strings.Repeat("a", MaxTokenSize), strings.Repeat("a", MaxTokenSize), nil},
		{"token too large", "Bearer " + strings.Repeat("a", MaxTokenSize+1), "", ErrMalformed},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := BearerToken(tt.header)
			if got != tt.want || !errors.Is(err, tt.err) || (tt.err == nil) != (err == nil) {
				t.Errorf("BearerToken(%.40q) = %.20q, %v; want %.20q, %v", tt.header, got, err, tt.want, tt.err)
			}
			if err != nil && strings.Contains(err.Error(), tok) {
				t.Errorf("error %q quotes the token", err)
			}
		})
	}
}

// TestIsToken68 holds isToken68 to RFC 9110's grammar written as a regular
// expression, for every byte alone and around the padding.
func TestIsToken68(t *testing.T) {
	grammar := regexp.MustCompile(`^[A-Za-z0-9._~+/-]+=*$`)
	for c := range 256 {
		for _, s := range []string{string([]byte{byte(c)}), "a" + string([]byte{byte(c)}) + "b", "ab" + string([]byte{byte(c)}), "a=" + string([]byte{byte(c)})} {
			if got, want := isToken68(s), grammar.MatchString(s); got != want {
				t.Errorf("isToken68(%q) = %v, want %v", s, got, want)
			}
		}
	}
}
