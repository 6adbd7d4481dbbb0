package contract

import (
	"encoding/base64"
	"errors"
	"fmt"
	"strings"
)

// WebhookSecretPrefix starts a Standard Webhooks secret: the prefix, then the
// key in standard base64.
const WebhookSecretPrefix = "whsec_"

// MinWebhookSecretSize is the fewest bytes a whsec_ secret may decode to, the
// least the Standard Webhooks specification allows.
const MinWebhookSecretSize = 24

// errSecretBase64 refuses a whsec_ key whose rest is not base64.
var errSecretBase64 = errors.New("a signing_key starting with " + WebhookSecretPrefix +
	" is a Standard Webhooks secret and must continue in standard, padded base64")

// SigningKeyBytes returns the HMAC key a subscription's signing key stands
// for: the decoded bytes of a whsec_ secret, as every Standard Webhooks
// library reads the same string, or else the key's UTF-8 bytes.
//
// It decodes as the reference library's NewWebhook does (standard base64,
// padded) but by hand, since that constructor neither returns the bytes
// nor checks their length, which registration must refuse clearly.
func SigningKeyBytes(key string) ([]byte, error) {
	encoded, ok := strings.CutPrefix(key, WebhookSecretPrefix)
	if !ok {
		return []byte(key), nil
	}
	b, err := base64.StdEncoding.Strict().DecodeString(encoded)
	switch {
	case err != nil:
		return nil, errSecretBase64
	case len(b) < MinWebhookSecretSize:
		return nil, fmt.Errorf("a %s signing_key must decode to at least %d bytes; this one decodes to %d",
			WebhookSecretPrefix, MinWebhookSecretSize, len(b))
	}
	return b, nil
}
