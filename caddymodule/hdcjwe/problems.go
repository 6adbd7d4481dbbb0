package hdcjwe

import (
	"net/http"

	"github.com/health-data-connect/hdc/internal/problem"
)

// hdc_jwe's own answers. Their codes are stable; docs/errors.md lists them.
var (
	// errInvalidEncryption is the one answer to every failure that involves
	// a key: bad tag, bad padding, unknown, retired or foreign kid. Its bytes
	// never vary, so the answer says nothing about which it was.
	errInvalidEncryption = problem.New(http.StatusBadRequest, problem.CodeInvalidEncryption,
		"The request could not be decrypted.")
	errEncryptionRequired = problem.New(http.StatusBadRequest, problem.CodeEncryptionRequired,
		"This route only accepts JWE-encrypted requests (X-Encryption: JWE).")
	errEncryptionHeader = problem.New(http.StatusBadRequest, problem.CodeInvalidEncryptionHeader,
		"X-Encryption must be given once, with the value JWE, or not at all.")
	errKidHeader = problem.New(http.StatusBadRequest, problem.CodeInvalidEncryptionHeader,
		"X-Encryption-Kid must be given once.")
	errMissingKid = problem.New(http.StatusBadRequest, problem.CodeInvalidEnvelope,
		"The envelope names no key: send a top-level kid or a kid in the protected header.")
	errNeedsKidHeader = problem.New(http.StatusBadRequest, problem.CodeInvalidEnvelope,
		"A request without a body asks for an encrypted response with X-Encryption-Kid.")
	errLoginNeedsBody = problem.New(http.StatusBadRequest, problem.CodeInvalidEnvelope,
		"An encrypted login must carry its credentials as an envelope.")
	errLoginBody = problem.New(http.StatusBadRequest, problem.CodeInvalidRequest,
		"The decrypted login body must be a JSON object with a string client_id.")
	errMediaType = problem.New(http.StatusUnsupportedMediaType, problem.CodeUnsupportedMedia,
		"An encrypted body must be application/json or application/jose+json (JWE JSON serialization) or application/jose (compact JWE).")
	errResponseTooLarge = problem.New(http.StatusBadGateway, problem.CodeResponseTooLarge,
		"The response exceeds the size the edge encrypts.")
	// errKeyLookupsBusy: the key may exist, but this edge does not hold it
	// and may not ask for it now, or the client's address has had too many
	// requests refused on their key; it answers with Retry-After.
	errKeyLookupsBusy = problem.New(http.StatusServiceUnavailable, problem.CodeKeyLookupsBusy,
		"This edge is asked for too many keys it does not hold, or refuses too many requests on their key, from this address or from all: retry after the seconds of Retry-After.")
	errUpstream = problem.New(http.StatusBadGateway, problem.CodeUpstreamError,
		"The service behind the edge did not answer.")
)

func invalidEnvelope(reason string) *problem.Problem {
	return problem.New(http.StatusBadRequest, problem.CodeInvalidEnvelope, reason)
}
