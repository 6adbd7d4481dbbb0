package tokenauth

import "strings"

// BearerToken returns the token of an Authorization header value. The value
// must be exactly the scheme "Bearer" (in any case), one space, and a token
// of the token68 syntax (RFC 6750 §2.1, RFC 9110 §11.2) of at most
// MaxTokenSize bytes. An empty value gives ErrMissing; any other form gives
// ErrMalformed.
func BearerToken(authorization string) (string, error) {
	if authorization == "" {
		return "", ErrMissing
	}
	scheme, token, ok := strings.Cut(authorization, " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") {
		return "", detail(ErrMalformed, `Authorization is not "Bearer <token>"`)
	}
	if len(token) > MaxTokenSize || !isToken68(token) {
		return "", detail(ErrMalformed, "the bearer token is not a single token68")
	}
	return token, nil
}

// isToken68 reports whether s is 1*( ALPHA / DIGIT / "-" / "." / "_" / "~"
// / "+" / "/" ) *"=".
func isToken68(s string) bool {
	body := strings.TrimRight(s, "=")
	if body == "" {
		return false
	}
	for i := 0; i < len(body); i++ {
		if !token68Char[body[i]] {
			return false
		}
	}
	return true
}

// token68Char holds the characters of token68 before its padding: a
// look-up a character, where a switch of ranges took eight instructions
// (hdc-bench --instructions), over every request's token.
var token68Char = func() (t [256]bool) {
	for c := range 256 {
		t[c] = 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || strings.IndexByte("-._~+/", byte(c)) >= 0
	}
	return t
}()
