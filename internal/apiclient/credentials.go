package apiclient

import (
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"os"

	"github.com/health-data-connect/hdc/internal/clientkey"
	"github.com/health-data-connect/hdc/internal/jwe"
	"github.com/health-data-connect/hdc/internal/privatefile"
)

// Credentials are a client's: the API's base URL, the client's id and
// secret, its encryption key, and the authority of the edge's certificate
// when the system does not trust it: the file an operator hands a client
// (hdc clients create and hdc keys add|rotate --credentials-out), which hdc
// call reads, as hdc up writes its demo client's. docs/clients.md
// describes it.
type Credentials struct {
	BaseURL      string `json:"base_url"`
	ClientID     string `json:"client_id"`
	ClientSecret string `json:"client_secret,omitempty"`
	WorkspaceID  string `json:"workspace_id,omitempty"`
	// Kid and EncryptionKey are the client's key: an A128CBC-HS256 key's
	// 16-byte shared string, or an A256GCM key's 32 bytes in base64url
	// (its JWK's k).
	Kid           string `json:"kid,omitempty"`
	EncryptionKey string `json:"encryption_key,omitempty"`
	// Enc is the key's content encryption; "" is what the key's form says
	// (KeyEnc).
	Enc string `json:"enc,omitempty"`
	// JWK is the same key as a JSON Web Key, which the JOSE libraries
	// import as it is (docs/clients.md); hdc call reads EncryptionKey.
	JWK *clientkey.JWK `json:"jwk,omitempty"`
	// CA is the certificate, in PEM, of the authority the edge's
	// certificate chains to, when it is a private one; "" to trust the
	// system's authorities.
	CA string `json:"ca,omitempty"`
}

// Save writes the credentials to the file path (Encode), readable by its
// owner only (privatefile).
func (c Credentials) Save(path string) error {
	return privatefile.Write(path, c.Encode())
}

// Encode returns the credentials file's bytes: indented JSON.
func (c Credentials) Encode() []byte {
	out, _ := json.MarshalIndent(c, "", "  ") // strings and a JWK of strings: it cannot fail
	return append(out, '\n')
}

// Handover is what an operator hands a client in its credentials file:
// the API's base URL and the certificate (PEM) of the edge's authority
// when it is a private one, each when given; and what the Admin API issued
// it, shown once: a new client's secret with its workspace, a key.
type Handover struct {
	BaseURL, EdgeCA     string
	Secret, WorkspaceID string
	Key                 *clientkey.Key
}

// Hand brings c, its client's credentials, up to date with h, keeping
// what h does not give: hdc clients create and hdc keys add|rotate
// --credentials-out, and the console's download, write the file so.
func (c *Credentials) Hand(h Handover) {
	if h.BaseURL != "" {
		c.BaseURL = h.BaseURL
	}
	if h.EdgeCA != "" {
		c.CA = h.EdgeCA
	}
	if h.Secret != "" {
		c.ClientSecret, c.WorkspaceID = h.Secret, h.WorkspaceID
	}
	if h.Key != nil {
		c.SetKey(*h.Key)
	}
}

// ReadCredentials reads the credentials file at path.
func ReadCredentials(path string) (Credentials, error) {
	var c Credentials
	b, err := os.ReadFile(path)
	if err != nil {
		return c, err
	}
	if err := json.Unmarshal(b, &c); err != nil {
		return c, fmt.Errorf("%s: %w", path, err)
	}
	return c, nil
}

// SetKey makes k the credentials' key, in both its forms.
func (c *Credentials) SetKey(k clientkey.Key) {
	jwk := k.JWK()
	c.Kid, c.EncryptionKey, c.Enc, c.JWK = k.Kid, k.Secret, k.ContentEncryption(), &jwk
}

// KeyEnc returns the content encryption of the credentials' key: Enc,
// else the JWK's, else what the key's form says (16 bytes: A128CBC-HS256;
// 32 bytes in base64url: A256GCM), and an error that says what is missing
// or wrong for an encrypted call.
func (c Credentials) KeyEnc() (string, error) {
	switch {
	case c.Kid == "":
		return "", errors.New("encrypting needs the key's kid: --kid, or kid in the credentials file")
	case c.EncryptionKey == "":
		return "", errors.New("encrypting needs the key: --key (or HDC_ENCRYPTION_KEY), or encryption_key in the credentials file")
	}
	enc := c.Enc
	if enc == "" && c.JWK != nil {
		enc = c.JWK.Enc
	}
	for _, kind := range []string{jwe.EncA128CBCHS256, jwe.EncA256GCM} {
		if _, err := jwe.NewKeyFor(kind, c.EncryptionKey); err == nil && (enc == "" || enc == kind) {
			return kind, nil
		}
	}
	if enc != "" {
		return "", fmt.Errorf("the key is not an %s key (%s)", enc, keyForms)
	}
	return "", fmt.Errorf("the key is neither kind's (%s)", keyForms)
}

// keyForms says what a key of each content encryption looks like.
const keyForms = "an A128CBC-HS256 key is 16 bytes; an A256GCM key 32 bytes in base64url, its JWK's k"

// TLSConfig returns the TLS configuration of the calls: the credentials'
// CA as the one authority when there is one, else nil, the system's.
func (c Credentials) TLSConfig() (*tls.Config, error) {
	if c.CA == "" {
		return nil, nil
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM([]byte(c.CA)) {
		return nil, errors.New("the edge's CA (--cacert, or ca in the credentials file) holds no PEM certificate")
	}
	return &tls.Config{RootCAs: pool}, nil
}
