package adminapi

import (
	"net/url"
	"time"

	"github.com/health-data-connect/hdc/internal/clientkey"
	"github.com/health-data-connect/hdc/internal/contract"
)

// KeyInfo is a client's shared encryption key as the API lists it, never
// with its secret: its kid and client, its kind (enc, and whether its
// envelopes must name iat and jti), status and dates, its client's
// workspace, and its last use at any edge (the OpenAPI document's Key).
type KeyInfo struct {
	clientkey.Listed
	WorkspaceID string `json:"workspace_id"`
	// LastUsedAt is the latest use of the key at any edge, as the edges
	// report it over the hop (every few seconds); absent when no edge has
	// reported a use.
	LastUsedAt *time.Time `json:"last_used_at,omitempty"`
}

// KeyQuery selects keys: of a client, of a workspace, of a status, a page
// at a time in kid order.
type KeyQuery struct {
	Client    string
	Workspace string
	Status    clientkey.Status
	Cursor    string
	Limit     int
}

// ParseKeyQuery reads a KeyQuery from the query of GET /admin/v1/keys:
// client, workspace, status (active, retiring, retired), cursor, limit.
func ParseKeyQuery(q url.Values) (KeyQuery, error) {
	v, err := params(q, "client", "workspace", "status", "cursor", "limit")
	if err != nil {
		return KeyQuery{}, err
	}
	kq := KeyQuery{Client: v["client"], Workspace: v["workspace"], Status: clientkey.Status(v["status"]), Cursor: v["cursor"]}
	if err := kq.Check(); err != nil {
		return kq, err
	}
	kq.Limit, err = limitOf(v["limit"])
	return kq, err
}

// Check refuses a filter no key can match and a page size out of bounds.
func (q KeyQuery) Check() error {
	switch {
	case q.Client != "" && !clientkey.ValidClientID(q.Client):
		return invalid("client must be 1 to 256 bytes of UTF-8")
	case q.Workspace != "" && !contract.ValidID(q.Workspace):
		return invalid("workspace is not a workspace id")
	case q.Status != "" && !q.Status.Valid():
		return invalid("status must be active, retiring or retired")
	}
	return checkLimit(q.Limit)
}

// Values returns q as query parameters, ParseKeyQuery's inverse.
func (q KeyQuery) Values() url.Values {
	return values("client", q.Client, "workspace", q.Workspace, "status", string(q.Status), "cursor", q.Cursor, "limit", limitValue(q.Limit))
}

// IssuedKey is a key as the answer that makes it shows it, its secret
// included: the only time it is shown (hdc keys add and rotate print it).
type IssuedKey struct {
	Kid      string `json:"kid"`
	ClientID string `json:"client_id"`
	Secret   string `json:"secret"`
	Enc      string `json:"enc"`
	// RequireFresh: the key's envelopes must name iat and jti.
	RequireFresh bool `json:"require_fresh,omitempty"`
	// JWK is the key as a JSON Web Key, which the JOSE libraries import
	// as it is (the client-library table of docs/clients.md).
	JWK clientkey.JWK `json:"jwk"`
}

// Issued is k as the answer that makes it shows it.
func Issued(k clientkey.Key) IssuedKey {
	return IssuedKey{Kid: k.Kid, ClientID: k.ClientID, Secret: k.Secret, Enc: k.ContentEncryption(), RequireFresh: k.NeedsFreshness(), JWK: k.JWK()}
}

// Rotated is what a rotation to the new key next did, or in a dry run
// would do: the kids it moved to retiring, and what the new key gives up
// against the key it replaces (weakened); the new key with its secret
// unless a dry run.
func Rotated(next clientkey.Key, retiring, weakened []string, dryRun bool) Rotation {
	out := Rotation{DryRun: dryRun, ClientID: next.ClientID,
		NewKey:   KeyKind{Enc: next.ContentEncryption(), RequireFresh: next.NeedsFreshness()},
		Retiring: append([]string{}, retiring...), Weakened: weakened}
	if !dryRun {
		issued := Issued(next)
		out.Key = &issued
	}
	return out
}

// Key is the active key k shows, for a client's credentials file.
func (k IssuedKey) Key() clientkey.Key {
	return clientkey.Key{Kid: k.Kid, ClientID: k.ClientID, Secret: k.Secret, Enc: k.Enc, RequireFresh: k.RequireFresh, Status: clientkey.Active}
}

// AddKeyRequest is the body of POST /admin/v1/clients/{id}/keys: the new
// key's kid and secret ("" for random ones), its content encryption (""
// for A128CBC-HS256), and whether its envelopes must name iat and jti
// (always so for A256GCM).
type AddKeyRequest struct {
	Kid          string `json:"kid,omitempty"`
	Secret       string `json:"secret,omitempty"`
	Enc          string `json:"enc,omitempty"`
	RequireFresh bool   `json:"require_fresh,omitempty"`
}

// RotateKeyRequest is the body of POST /admin/v1/clients/{id}/keys/rotate:
// the new key's enc and freshness (absent to keep the replaced key's),
// whether it may be weaker than the key it replaces, and whether to say
// what the rotation would do and change nothing.
type RotateKeyRequest struct {
	Enc          string `json:"enc,omitempty"`
	RequireFresh *bool  `json:"require_fresh,omitempty"`
	AllowWeaker  bool   `json:"allow_weaker,omitempty"`
	DryRun       bool   `json:"dry_run,omitempty"`
}

// KeyKind is the kind of a key: its content encryption, and whether its
// envelopes must name iat and jti.
type KeyKind struct {
	Enc          string `json:"enc"`
	RequireFresh bool   `json:"require_fresh"`
}

// Rotation is what a rotation did, or in a dry run would do.
type Rotation struct {
	DryRun   bool   `json:"dry_run,omitempty"`
	ClientID string `json:"client_id"`
	// Key is the new active key, its secret shown this once; absent in
	// a dry run.
	Key *IssuedKey `json:"key,omitempty"`
	// NewKey is the new key's kind.
	NewKey KeyKind `json:"new_key"`
	// Retiring are the kids the rotation moved to retiring, still
	// accepted until retired.
	Retiring []string `json:"retiring"`
	// Weakened is what the new key gives up against the key it replaces
	// (enc, freshness), which allow_weaker allowed.
	Weakened []string `json:"weakened,omitempty"`
}

// RetireKeyRequest is the body of POST /admin/v1/keys/{kid}/retire:
// whether to retire a client's last active key (or its last key), which
// is refused otherwise, and whether to say what the retirement would do
// and change nothing.
type RetireKeyRequest struct {
	Force  bool `json:"force,omitempty"`
	DryRun bool `json:"dry_run,omitempty"`
}

// Retirement is what a retirement did, or in a dry run would do.
type Retirement struct {
	DryRun bool `json:"dry_run,omitempty"`
	// Key is the key as retired.
	Key clientkey.Listed `json:"key"`
	// Changed: the key was not retired already. Retiring a retired key
	// changes nothing and answers as the first retirement did.
	Changed bool `json:"changed"`
}
