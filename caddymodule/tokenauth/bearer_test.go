package tokenauth

import (
	"errors"
	"strings"
	"testing"
)

func TestBearerToken(t *testing.T) {
	const tok = "eyJhbGciOiJFZERTQSJ9.eyJzdWIiOiJjIn0.c2ln"
	tests := []struct {
		header string
		want   string
		err    error
	}{
		{"Bearer " + tok, tok, nil},
		{"bearer " + tok, tok, nil},
		{"BEARER " + tok, tok, nil},
		{"Bearer abc+/~_-.==", "abc+/~_-.==", nil},
		{"", "", ErrMissing},
		{"Bearer", "", ErrMalformed},
		{"Bearer ", "", ErrMalformed},
		{"Bearer  " + tok, "", ErrMalformed},
		{"Bearer " + tok + " ", "", ErrMalformed},
		{"Bearer " + tok + " extra", "", ErrMalformed},
		{"Bearer\t" + tok, "", ErrMalformed},
		{" Bearer " + tok, "", ErrMalformed},
		{"Basic dXNlcjpwYXNz", "", ErrMalformed},
		{"Bearer:" + tok, "", ErrMalformed},
		{"Bearertoken " + tok, "", ErrMalformed},
		{tok, "", ErrMalformed},
		{"Bearer ===", "", ErrMalformed},
		{"Bearer a=b", "", ErrMalformed},
		{"Bearer " + tok + ",Bearer " + tok, "", ErrMalformed},
		{"Bearer tök", "", ErrMalformed},
		{"Bearer " + strings.Repeat("a", MaxTokenSize), strings.Repeat("a", MaxTokenSize), nil},
		{"Bearer " + strings.Repeat("a", MaxTokenSize+1), "", ErrMalformed},
	}
	for _, tt := range tests {
		got, err := BearerToken(tt.header)
		if got != tt.want || !errors.Is(err, tt.err) || (tt.err == nil) != (err == nil) {
			t.Errorf("BearerToken(%.40q) = %.20q, %v; want %.20q, %v", tt.header, got, err, tt.want, tt.err)
		}
		if err != nil && strings.Contains(err.Error(), tok) {
			t.Errorf("error %q quotes the token", err)
		}
	}
}
