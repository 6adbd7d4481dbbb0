package contract

import (
	"bytes"
	"encoding/base64"
	"strings"
	"testing"
)

func TestSigningKeyBytes(t *testing.T) {
	key24 := bytes.Repeat([]byte{0xfb}, 24)
	tests := []struct {
		name    string
		key     string
		want    []byte
		wantErr string
	}{
		{"raw key", "0123456789abcdef", []byte("0123456789abcdef"), ""},
		{"raw UTF-8 key", "clé-secrète-0123456789", []byte("clé-secrète-0123456789"), ""},
		{"prefix elsewhere", "my-whsec_0123456789", []byte("my-whsec_0123456789"), ""},
		{"secret", "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw", mustB64(t, "MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"), ""},
		{"secret of 24 bytes with + and /", "whsec_" + base64.StdEncoding.EncodeToString(key24), key24, ""},
		{"secret of 64 bytes", "whsec_" + base64.StdEncoding.EncodeToString(make([]byte, 64)), make([]byte, 64), ""},
		{"23 bytes", "whsec_" + base64.StdEncoding.EncodeToString(make([]byte, 23)), nil, "at least 24 bytes; this one decodes to 23"},
		{"not base64", "whsec_not*base64*at*all*0123456789", nil, "base64"},
		{"URL alphabet", "whsec_" + base64.URLEncoding.EncodeToString(key24), nil, "base64"},
		{"unpadded", "whsec_" + base64.RawStdEncoding.EncodeToString(make([]byte, 25)), nil, "base64"},
		{"empty secret", "whsec_", nil, "decodes to 0"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := SigningKeyBytes(tt.key)
			switch {
			case tt.wantErr == "" && err != nil:
				t.Fatalf("err = %v", err)
			case tt.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tt.wantErr)):
				t.Fatalf("err = %v, want %q", err, tt.wantErr)
			case tt.wantErr != "" && strings.Contains(err.Error(), strings.TrimPrefix(tt.key, "whsec_")) && len(tt.key) > 6:
				t.Fatalf("the error repeats the key: %v", err)
			case !bytes.Equal(got, tt.want):
				t.Fatalf("key bytes %x, want %x", got, tt.want)
			}
		})
	}
}

func mustB64(t *testing.T, s string) []byte {
	t.Helper()
	b, err := base64.StdEncoding.DecodeString(s)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
