package jwe

import (
	"encoding/json"

	"github.com/health-data-connect/hdc/internal/jwe/cbchmac"
)

// protectedHeader returns the encoded protected header of an envelope.
func protectedHeader(kid string) string {
	return b64.EncodeToString(appendHeader(nil, kid))
}

// appendHeader appends the JSON of a header naming alg, enc and, when not
// empty, kid: the bytes json.Marshal gives for that Header, built without
// reflection because every encrypted response needs one.
func appendHeader(b []byte, kid string) []byte {
	b = append(b, `{"alg":"`+AlgDir+`","enc":"`+EncA128CBCHS256+`"`...)
	if kid != "" {
		b = append(b, `,"kid":`...)
		b = appendJSONString(b, kid)
	}
	return append(b, '}')
}

// EncryptRequest returns a request envelope in the flattened JSON
// serialization: protected (alg, enc, and kid when given), iv, ciphertext,
// tag, and the top-level kid when given.
func EncryptRequest(k *cbchmac.Key, kid string, plaintext []byte) []byte {
	return encryptFlattened(k, kid, plaintext, true)
}

// EncryptResponse returns a response envelope in the flattened JSON
// serialization: protected (alg, enc, and kid when given), iv, ciphertext
// and tag, the additional authenticated data being the protected member's
// text (RFC 7516 §5.1), as every JOSE library reads it.
func EncryptResponse(k *cbchmac.Key, kid string, plaintext []byte) []byte {
	return encryptFlattened(k, kid, plaintext, false)
}

func encryptFlattened(k *cbchmac.Key, kid string, plaintext []byte, topKid bool) []byte {
	protected := protectedHeader(kid)
	iv, ct, tag := k.Seal(protected, plaintext)
	b := make([]byte, 0, len(protected)+b64.EncodedLen(len(ct))+len(kid)+128)
	b = append(b, '{')
	b = appendB64Member(b, "protected", []byte(protected), false)
	b = appendB64Member(b, "iv", iv, true)
	b = appendB64Member(b, "ciphertext", ct, true)
	b = appendB64Member(b, "tag", tag, true)
	if topKid && kid != "" {
		b = append(b, `,"kid":`...)
		b = appendJSONString(b, kid)
	}
	return append(b, '}')
}

// EncryptCompact returns an envelope in the compact serialization: the
// answer to a compact request has this form too.
func EncryptCompact(k *cbchmac.Key, kid string, plaintext []byte) []byte {
	protected := protectedHeader(kid)
	iv, ct, tag := k.Seal(protected, plaintext)
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
