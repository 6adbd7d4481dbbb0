package credential

import (
	"bytes"
	"encoding/base64"
	"strings"
	"testing"
)

// fast keeps the tests quick; the encoding carries the parameters anyway.
var fast = Params{Memory: 64, Time: 1, Threads: 1}

func TestHashVerify(t *testing.T) {
	enc := Hash("s3cret", fast)
	if !strings.HasPrefix(enc, "$argon2id$v=19$m=64,t=1,p=1$") {
		t.Fatalf("encoding = %q", enc)
	}
	if enc == Hash("s3cret", fast) {
		t.Fatal("two hashes of one secret are equal: the salt is not random")
	}
	for _, tt := range []struct {
		secret string
		want   bool
	}{{"s3cret", true}, {"s3cret ", false}, {"", false}, {"S3cret", false}} {
		got, err := Verify(tt.secret, enc)
		if err != nil || got != tt.want {
			t.Errorf("Verify(%q) = %v, %v; want %v", tt.secret, got, err, tt.want)
		}
	}
}

func TestDefaultParamsEncoded(t *testing.T) {
	enc := Hash("x", DefaultParams)
	if !strings.Contains(enc, "$m=19456,t=2,p=1$") {
		t.Fatalf("encoding %q does not carry the default parameters", enc)
	}
	if ok, err := Verify("x", enc); !ok || err != nil {
		t.Fatalf("Verify = %v, %v", ok, err)
	}
}

func TestVerifyMalformed(t *testing.T) {
	salt := base64.RawStdEncoding.EncodeToString(make([]byte, 16))
	key := base64.RawStdEncoding.EncodeToString(make([]byte, 32))
	for _, enc := range []string{
		"",
		"plain",
		"$argon2i$v=19$m=64,t=1,p=1$" + salt + "$" + key,
		"$argon2id$v=18$m=64,t=1,p=1$" + salt + "$" + key,
		"$argon2id$v=19$m=0,t=1,p=1$" + salt + "$" + key,
		"$argon2id$v=19$m=64,t=0,p=1$" + salt + "$" + key,
		"$argon2id$v=19$m=64,t=1,p=0$" + salt + "$" + key,
		"$argon2id$v=19$m=99999999,t=1,p=1$" + salt + "$" + key,
		"$argon2id$v=19$m=64,t=1,p=300$" + salt + "$" + key,
		"$argon2id$v=19$m=64,t=1,p=1$!!$" + key,
		"$argon2id$v=19$m=64,t=1,p=1$" + salt + "$",
		"$argon2id$v=19$m=64,t=1,p=1$" + salt + "$" + key + "$",
		"x$argon2id$v=19$m=64,t=1,p=1$" + salt + "$" + key,
	} {
		if ok, err := Verify("x", enc); ok || err == nil {
			t.Errorf("Verify(%q) = %v, %v; want ErrMalformedHash", enc, ok, err)
		}
	}
}

func TestNewToken(t *testing.T) {
	a, b := NewToken("hdc_rt_"), NewToken("hdc_rt_")
	if a == b {
		t.Fatal("two tokens are equal")
	}
	raw, err := base64.RawURLEncoding.DecodeString(strings.TrimPrefix(a, "hdc_rt_"))
	if !strings.HasPrefix(a, "hdc_rt_") || err != nil || len(raw) != 32 {
		t.Fatalf("token %q: want prefix and 256 bits of base64url (%v)", a, err)
	}
	if !bytes.Equal(TokenHash(a), TokenHash(a)) || bytes.Equal(TokenHash(a), TokenHash(b)) || len(TokenHash(a)) != 32 {
		t.Fatal("TokenHash is not a deterministic 32-byte digest")
	}
}

func TestMAC(t *testing.T) {
	key, other := NewKey(), NewKey()
	enc := MAC(key, "hdc_cs_s3cret")
	if !strings.HasPrefix(enc, "$hmac-sha256$v=1$") || !IsMAC(enc) || IsMAC(Hash("x", fast)) {
		t.Fatalf("encoding = %q", enc)
	}
	if enc != MAC(key, "hdc_cs_s3cret") || enc == MAC(other, "hdc_cs_s3cret") {
		t.Fatal("a MAC depends on the secret and the key alone")
	}
	tests := []struct {
		name, secret, encoded string
		key                   []byte
		want                  bool
		wantErr               bool
	}{
		{"right", "hdc_cs_s3cret", enc, key, true, false},
		{"wrong secret", "hdc_cs_s3cret ", enc, key, false, false},
		{"empty secret", "", enc, key, false, false},
		{"another key", "hdc_cs_s3cret", enc, other, false, false},
		{"an argon2id encoding", "hdc_cs_s3cret", Hash("hdc_cs_s3cret", fast), key, false, true},
		{"truncated", "hdc_cs_s3cret", enc[:len(enc)-2], key, false, true},
		{"not base64", "hdc_cs_s3cret", "$hmac-sha256$v=1$!!!!", key, false, true},
		{"another version", "hdc_cs_s3cret", strings.Replace(enc, "v=1", "v=2", 1), key, false, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ok, err := VerifyMAC(tt.key, tt.secret, tt.encoded)
			if ok != tt.want || (err != nil) != tt.wantErr {
				t.Fatalf("VerifyMAC = %v, %v; want %v, error %v", ok, err, tt.want, tt.wantErr)
			}
		})
	}
}
