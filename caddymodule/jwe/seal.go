package jwe

import (
	"crypto/rand"
	"encoding/json"
)

// seal encrypts plaintext under k with a fresh random iv and the given
// additional authenticated data.
func seal(k *Key, aad, plaintext []byte) (iv, ciphertext, tag []byte) {
	iv = make([]byte, ivSize)
	_, _ = rand.Read(iv)
	ciphertext, tag = sealIV(k, iv, aad, plaintext)
	return iv, ciphertext, tag
}

// sealIV encrypts with go-jose's A128CBC-HS256 AEAD under the given iv.
func sealIV(k *Key, iv, aad, plaintext []byte) (ciphertext, tag []byte) {
	out := k.aead.Seal(nil, iv, plaintext, aad)
	return out[:len(out)-tagSize], out[len(out)-tagSize:]
}

// protectedHeader returns the encoded protected header of a request.
func protectedHeader(kid string) string {
	h, _ := json.Marshal(Header{Alg: AlgDir, Enc: EncA128CBCHS256, Kid: kid})
	return b64.EncodeToString(h)
}

// EncryptRequest returns a request envelope in the flattened JSON
// serialization: protected (alg, enc, and kid when given), iv, ciphertext,
// tag, and the top-level kid when given.
func EncryptRequest(k *Key, kid string, plaintext []byte) []byte {
	protected := protectedHeader(kid)
	iv, ct, tag := seal(k, []byte(protected), plaintext)
	b := make([]byte, 0, len(protected)+b64.EncodedLen(len(ct))+len(kid)+128)
	b = append(b, '{')
	b = appendB64Member(b, "protected", []byte(protected), false)
	b = appendB64Member(b, "iv", iv, true)
	b = appendB64Member(b, "ciphertext", ct, true)
	b = appendB64Member(b, "tag", tag, true)
	if kid != "" {
		b = append(b, `,"kid":`...)
		b = appendJSONString(b, kid)
	}
	return append(b, '}')
}

// EncryptCompact returns a request envelope in the compact serialization.
func EncryptCompact(k *Key, kid string, plaintext []byte) []byte {
	protected := protectedHeader(kid)
	iv, ct, tag := seal(k, []byte(protected), plaintext)
	b := make([]byte, 0, len(protected)+b64.EncodedLen(len(ct))+64)
	b = append(b, protected...)
	b = append(b, '.', '.')
	b = b64.AppendEncode(b, iv)
	b = append(b, '.')
	b = b64.AppendEncode(b, ct)
	b = append(b, '.')
	return b64.AppendEncode(b, tag)
}

// EncryptResponse returns a response envelope: ciphertext, iv and tag with
// empty additional authenticated data, as the specification shows, plus an
// unprotected header naming alg, enc and kid so that standard JOSE libraries
// read it as a flattened JWE.
func EncryptResponse(k *Key, kid string, plaintext []byte) []byte {
	iv, ct, tag := seal(k, nil, plaintext)
	header, _ := json.Marshal(Header{Alg: AlgDir, Enc: EncA128CBCHS256, Kid: kid})
	b := make([]byte, 0, b64.EncodedLen(len(ct))+len(header)+96)
	b = append(b, '{')
	b = appendB64Member(b, "ciphertext", ct, true)
	b = appendB64Member(b, "iv", iv, true)
	b = appendB64Member(b, "tag", tag, true)
	b = append(b, `,"unprotected":`...)
	b = append(b, header...)
	return append(b, '}')
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

func appendJSONString(b []byte, s string) []byte {
	q, _ := json.Marshal(s)
	return append(b, q...)
}
