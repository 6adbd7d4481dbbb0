package jwe

import (
	"crypto/rand"
	"encoding/json"
	"strconv"
	"time"
)

// Protected is what a protected header names besides alg "dir": the
// key's enc, its kid, and a request's freshness, iat and jti.
type Protected struct {
	Kid string
	// Iat is the request's time in seconds since the Unix epoch; 0 names
	// none.
	Iat int64
	// Jti is the request's unique id under its key; "" names none.
	Jti string
}

// Fresh returns the protected header members of a request made now under
// kid: iat, the time, and jti, 128 random bits in unpadded base64url, new
// for every call.
func Fresh(kid string) Protected {
	jti := make([]byte, 16)
	_, _ = rand.Read(jti)
	return Protected{Kid: kid, Iat: time.Now().Unix(), Jti: b64.EncodeToString(jti)}
}

// protectedHeader returns the encoded protected header of an envelope
// under a key of content encryption enc.
func protectedHeader(enc string, p Protected) string {
	return b64.EncodeToString(appendHeader(nil, enc, p))
}

// appendHeader appends the JSON of a header naming alg, enc and, when not
// empty, kid, iat and jti: the bytes json.Marshal gives for that Header,
// built without reflection because every encrypted response needs one.
func appendHeader(b []byte, enc string, p Protected) []byte {
	b = append(b, `{"alg":"`+AlgDir+`","enc":"`...)
	b = append(b, enc...)
	b = append(b, '"')
	if p.Kid != "" {
		b = append(b, `,"kid":`...)
		b = appendJSONString(b, p.Kid)
	}
	if p.Iat != 0 {
		b = strconv.AppendInt(append(b, `,"iat":`...), p.Iat, 10)
	}
	if p.Jti != "" {
		b = append(b, `,"jti":`...)
		b = appendJSONString(b, p.Jti)
	}
	return append(b, '}')
}

// seal encrypts plaintext under k, the additional authenticated data
// being the encoded protected header, and returns the iv, ciphertext and
// tag.
func (k *CEK) seal(protected string, plaintext []byte) (iv, ct, tag []byte) {
	if k.gcm != nil {
		return sealGCM(k.gcm, protected, plaintext)
	}
	return k.cbc.Seal(protected, plaintext)
}

// EncryptRequest returns a request envelope in the flattened JSON
// serialization: protected (alg, enc, and what p names), iv, ciphertext,
// tag, and the top-level kid when p names one.
func EncryptRequest(k *CEK, p Protected, plaintext []byte) []byte {
	return encryptFlattened(k, p, plaintext, true)
}

// EncryptResponse returns a response envelope in the flattened JSON
// serialization: protected (alg, enc, and kid when given), iv, ciphertext
// and tag, the additional authenticated data being the protected member's
// text (RFC 7516 §5.1), as every JOSE library reads it.
func EncryptResponse(k *CEK, kid string, plaintext []byte) []byte {
	return encryptFlattened(k, Protected{Kid: kid}, plaintext, false)
}

func encryptFlattened(k *CEK, p Protected, plaintext []byte, topKid bool) []byte {
	protected := protectedHeader(k.enc, p)
	iv, ct, tag := k.seal(protected, plaintext)
	b := make([]byte, 0, len(protected)+b64.EncodedLen(len(ct))+len(p.Kid)+128)
	b = append(b, '{')
	b = appendB64Member(b, "protected", []byte(protected), false)
	b = appendB64Member(b, "iv", iv, true)
	b = appendB64Member(b, "ciphertext", ct, true)
	b = appendB64Member(b, "tag", tag, true)
	if topKid && p.Kid != "" {
		b = append(b, `,"kid":`...)
		b = appendJSONString(b, p.Kid)
	}
	return append(b, '}')
}

// EncryptCompact returns an envelope in the compact serialization: the
// answer to a compact request has this form too.
func EncryptCompact(k *CEK, p Protected, plaintext []byte) []byte {
	protected := protectedHeader(k.enc, p)
	iv, ct, tag := k.seal(protected, plaintext)
	b := make([]byte, 0, len(protected)+b64.EncodedLen(len(ct))+64)
	b = append(b, protected...)
	b = append(b, '.', '.')
	b = b64.AppendEncode(b, iv)
	b = append(b, '.')
	b = b64.AppendEncode(b, ct)
	b = append(b, '.')
	return b64.AppendEncode(b, tag)
}

// appendB64Member appends "name":"<value>" where value is already base64url
// text when encode is false and raw bytes to encode when it is true. Neither
// needs JSON escaping.
func appendB64Member(b []byte, name string, value []byte, encode bool) []byte {
	if len(b) > 1 {
		b = append(b, ',')
	}
	b = append(b, '"')
	b = append(b, name...)
	b = append(b, `":"`...)
	if encode {
		b = b64.AppendEncode(b, value)
	} else {
		b = append(b, value...)
	}
	return append(b, '"')
}

// appendJSONString appends s as a JSON string, escaped as json.Marshal
// escapes it. Kids of the registry need no escaping and take the short way.
func appendJSONString(b []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c >= 0x7f || c == '"' || c == '\\' || c == '<' || c == '>' || c == '&' {
			q, _ := json.Marshal(s)
			return append(b, q...)
		}
	}
	b = append(b, '"')
	b = append(b, s...)
	return append(b, '"')
}
