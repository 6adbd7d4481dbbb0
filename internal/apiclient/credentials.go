package apiclient

import (
	"encoding/json"

	"github.com/health-data-connect/hdc/internal/privatefile"
)

// Credentials are a client's: the API's base URL, the client's id and
// secret, and its encryption key, as the file hdc up writes for hdc call
// holds them.
type Credentials struct {
	BaseURL       string `json:"base_url"`
	ClientID      string `json:"client_id"`
	ClientSecret  string `json:"client_secret"`
	Kid           string `json:"kid"`
	EncryptionKey string `json:"encryption_key"`
	// Enc is the key's content encryption; "" is A128CBC-HS256.
	Enc         string `json:"enc,omitempty"`
	WorkspaceID string `json:"workspace_id"`
}

// Save writes the credentials to the file path as indented JSON, readable
// by its owner only (privatefile).
func (c Credentials) Save(path string) error {
	out, _ := json.MarshalIndent(c, "", "  ")
	return privatefile.Write(path, append(out, '\n'))
}
