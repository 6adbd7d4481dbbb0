package caddymodule

import (
	"net/http"

	"github.com/health-data-connect/hdc/internal/problem"
)

// The edge's own answers. Their codes are stable; the README lists them.
var (
	// errInvalidEncryption is the one answer to every failure that involves
	// a key: bad tag, bad padding, unknown, retired or foreign kid. Its bytes
	// never vary, so the answer says nothing about which it was.
	errInvalidEncryption = problem.New(http.StatusBadRequest, "invalid_encryption",
		"The request could not be decrypted.")
	errEncryptionRequired = problem.New(http.StatusBadRequest, "encryption_required",
		"This route only accepts JWE-encrypted requests (X-Encryption: JWE).")
	errMissingKid = problem.New(http.StatusBadRequest, "invalid_envelope",
		"The envelope names no key: send a top-level kid or a kid in the protected header.")
	errNeedsKidHeader = problem.New(http.StatusBadRequest, "invalid_envelope",
		"A request without a body asks for an encrypted response with X-Encryption-Kid.")
	errLoginNeedsBody = problem.New(http.StatusBadRequest, "invalid_envelope",
		"An encrypted login must carry its credentials as an envelope.")
	errLoginBody = problem.New(http.StatusBadRequest, "invalid_request",
		"The decrypted login body must be a JSON object with a string client_id.")
	errMediaType = problem.New(http.StatusUnsupportedMediaType, "unsupported_media_type",
		"An encrypted body must be application/json (flattened JWE) or application/jose (compact JWE).")
	errTooLarge = problem.New(http.StatusRequestEntityTooLarge, "payload_too_large",
		"The request body exceeds this route's limit.")
	errBodyRead = problem.New(http.StatusBadRequest, "invalid_request",
		"The request body could not be read.")
	errSpool = problem.New(http.StatusInternalServerError, "internal_error",
		"The edge could not buffer the request.")
	errResponseTooLarge = problem.New(http.StatusBadGateway, "response_too_large",
		"The response exceeds the size the edge encrypts.")
	errUpstream = problem.New(http.StatusBadGateway, "upstream_error",
		"The service behind the edge did not answer.")
)

func invalidEnvelope(reason string) *problem.Problem {
	return problem.New(http.StatusBadRequest, "invalid_envelope", reason)
}
