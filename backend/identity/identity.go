// Package identity manages who may call the API: workspaces, their clients,
// and sharing grants that let a client act in another workspace. Operators
// drive it through the hdc CLI; the login endpoint authenticates with it.
//
// Secrets leave this package exactly once, in the result of CreateClient or
// GrantSharing; the store only ever sees their hashes.
package identity

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/google/uuid"

	"github.com/health-data-connect/hdc/backend/audit"
	"github.com/health-data-connect/hdc/backend/credential"
	"github.com/health-data-connect/hdc/backend/store"
	"github.com/health-data-connect/hdc/internal/contract"
)

// Prefixes of the secrets this package issues.
const (
	clientSecretPrefix = "hdc_cs_"
	sharingKeyPrefix   = "hdc_sk_"
)

// Errors of authentication; their messages are safe to show to a client.
var (
	// ErrInvalidClient: unknown client, wrong secret or disabled client. The
	// three are deliberately indistinguishable.
	ErrInvalidClient = errors.New("invalid client credentials")
	// ErrInvalidSharingKey: unknown or revoked sharing key, or one granted
	// to another client.
	ErrInvalidSharingKey = errors.New("invalid sharing key")
	// ErrInvalidID: a workspace id that does not match contract.ValidID.
	ErrInvalidID = errors.New("identifiers are 1 to 64 letters, digits, '.', '_' or '-', starting with a letter or digit")
	// ErrOwnWorkspace: a grant of a client's own workspace, which it acts
	// in without one.
	ErrOwnWorkspace = errors.New("a client is not granted its own workspace")
)

// secretsKey names the key of the keyed hash of client secrets
// (store.Identities.HashKey).
const secretsKey = "client-secrets"

// legacyWait is the longest a login waits for one of the slots of
// argon2id verifications, the hash of clients not logged in since it was
// replaced: past it the login is refused with ErrBusy, never queued
// without bound behind a stranger's bad logins.
const legacyWait = 250 * time.Millisecond

// ErrBusy: every slot of argon2id verification stayed taken for
// legacyWait; nothing was decided, and the caller may retry shortly.
var ErrBusy = errors.New("too many logins are being verified; retry shortly")

// Service manages identities in a store.
type Service struct {
	store store.Identities
	// key is the key of the client secrets' keyed hash, read (or made) on
	// first use and then kept; a failure is not kept.
	mu  sync.Mutex
	key []byte
	// slots bounds concurrent argon2id verifications of secrets stored by
	// earlier versions, each of which holds their encoding's memory.
	slots chan struct{}
	wait  time.Duration
	now   func() time.Time
}

// New returns a Service over s. At most concurrency argon2id verifications
// (of secrets stored by earlier versions) run at once (at least one).
func New(s store.Identities, concurrency int) *Service {
	return &Service{
		store: s,
		slots: make(chan struct{}, max(concurrency, 1)),
		wait:  legacyWait,
		now:   time.Now,
	}
}

// secretsKeyOf returns the key of the client secrets' keyed hash.
func (s *Service) secretsKeyOf(ctx context.Context) ([]byte, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.key == nil {
		k, err := s.store.HashKey(ctx, secretsKey, credential.NewKey(), s.now())
		if err != nil {
			return nil, fmt.Errorf("the key of client secrets: %w", err)
		}
		s.key = k
	}
	return s.key, nil
}

// hashSecret returns the stored form of a client secret.
func (s *Service) hashSecret(ctx context.Context, secret string) (string, error) {
	key, err := s.secretsKeyOf(ctx)
	if err != nil {
		return "", err
	}
	return credential.MAC(key, secret), nil
}

// Credentials are a new client's credentials, shown once.
type Credentials struct {
	ClientID     string `json:"client_id"`
	ClientSecret string `json:"client_secret"`
	WorkspaceID  string `json:"workspace_id"`
}

// Meta is what an operator says of a client to find it again: its
// display name ("" for none) and its labels (nil for none).
type Meta struct {
	Name   string
	Labels map[string]string
}

// InvalidMetaError is a name (or, Label, a label) that is not one; its
// message says why without quoting the value.
type InvalidMetaError struct {
	Label bool
	Err   error
}

func (e *InvalidMetaError) Error() string { return e.Err.Error() }

// Check refuses a name or labels that contract refuses.
func (m Meta) Check() error {
	if m.Name != "" {
		if err := contract.CheckClientName(m.Name); err != nil {
			return &InvalidMetaError{Err: err}
		}
	}
	if err := contract.CheckLabels(m.Labels); err != nil {
		return &InvalidMetaError{Label: true, Err: err}
	}
	return nil
}

// CreateClient creates a client in workspaceID, creating the workspace when
// it does not exist, with the name and labels of meta, and returns its
// credentials; by is the operator the audit record names.
func (s *Service) CreateClient(ctx context.Context, by audit.Person, workspaceID string, meta Meta) (Credentials, error) {
	if !contract.ValidID(workspaceID) {
		return Credentials{}, ErrInvalidID
	}
	if err := meta.Check(); err != nil {
		return Credentials{}, err
	}
	if by == (audit.Person{}) {
		return Credentials{}, audit.ErrNoPerson
	}
	now := s.now()
	if _, err := s.store.EnsureWorkspace(ctx, workspaceID, now); err != nil {
		return Credentials{}, err
	}
	cred := Credentials{
		ClientID:     uuid.NewString(),
		ClientSecret: credential.NewToken(clientSecretPrefix),
		WorkspaceID:  workspaceID,
	}
	hash, err := s.hashSecret(ctx, cred.ClientSecret)
	if err != nil {
		return Credentials{}, err
	}
	err = s.store.CreateClient(ctx, store.Client{
		ID:          cred.ClientID,
		WorkspaceID: workspaceID,
		SecretHash:  hash,
		Status:      store.ClientActive,
		CreatedAt:   now,
		Name:        meta.Name,
		Labels:      meta.Labels,
	}, operatorEvent(now, by, audit.ClientCreate, workspaceID, audit.EntityClient, cred.ClientID))
	if err != nil {
		return Credentials{}, err
	}
	return cred, nil
}

// Client describes a client without its secret.
type Client struct {
	ClientID    string             `json:"client_id"`
	WorkspaceID string             `json:"workspace_id"`
	Status      store.ClientStatus `json:"status"`
	CreatedAt   time.Time          `json:"created_at"`
	Name        string             `json:"name,omitempty"`
	Labels      map[string]string  `json:"labels,omitempty"`
}

// clientOf is c without its secret.
func clientOf(c store.Client) Client {
	return Client{ClientID: c.ID, WorkspaceID: c.WorkspaceID, Status: c.Status, CreatedAt: c.CreatedAt, Name: c.Name, Labels: c.Labels}
}

// ListClients returns the clients f selects, in creation order (in name
// order by a name's prefix).
func (s *Service) ListClients(ctx context.Context, f store.ClientFilter) ([]Client, error) {
	list, err := s.store.ListClients(ctx, f)
	if err != nil {
		return nil, err
	}
	out := make([]Client, 0, len(list))
	for _, c := range list {
		out = append(out, clientOf(c))
	}
	return out, nil
}

// Update is a change of a client's name and labels: Name, when not nil,
// the new name ("" removes it); SetLabels added or changed; RemoveLabels
// the keys of labels removed.
type Update = store.ClientUpdate

// UpdateClient changes the client's name and labels as u says and returns
// it as it is then; the audit record names by and each field it moved,
// before and after. A change that moves nothing records nothing.
func (s *Service) UpdateClient(ctx context.Context, by audit.Person, clientID string, u Update) (Client, error) {
	meta := Meta{Labels: u.SetLabels}
	if u.Name != nil {
		meta.Name = *u.Name
	}
	if err := meta.Check(); err != nil {
		return Client{}, err
	}
	for _, k := range u.RemoveLabels {
		if err := contract.CheckLabelKey(k); err != nil {
			return Client{}, &InvalidMetaError{Label: true, Err: err}
		}
	}
	if by == (audit.Person{}) {
		return Client{}, audit.ErrNoPerson
	}
	c, err := s.store.GetClient(ctx, clientID)
	if err != nil {
		return Client{}, err
	}
	c, err = s.store.UpdateClient(ctx, clientID, u, operatorEvent(s.now(), by, audit.ClientUpdate, c.WorkspaceID, audit.EntityClient, clientID))
	return clientOf(c), err
}

// DisableClient stops the client from logging in and refreshing; access
// tokens it holds stay valid until they expire. by is the operator the
// audit record names.
func (s *Service) DisableClient(ctx context.Context, by audit.Person, clientID string) error {
	if by == (audit.Person{}) {
		return audit.ErrNoPerson
	}
	c, err := s.store.GetClient(ctx, clientID)
	if err != nil {
		return err
	}
	return s.store.SetClientStatus(ctx, clientID, store.ClientDisabled,
		operatorEvent(s.now(), by, audit.ClientDisable, c.WorkspaceID, audit.EntityClient, clientID))
}

// operatorEvent is the audit event of operator by's action on an entity
// in workspace ws: the operator is a person, no client (Client empty).
func operatorEvent(at time.Time, by audit.Person, a audit.Action, ws string, kind audit.EntityKind, id string) audit.Event {
	return audit.Event{At: at, Action: a, Outcome: audit.Success, Workspace: ws, Entity: audit.Entity{Kind: kind, ID: id}, Person: by}
}

// Grant is a new sharing grant with its key, shown once.
type Grant struct {
	GrantID     string `json:"grant_id"`
	SharingKey  string `json:"sharing_key"`
	WorkspaceID string `json:"workspace_id"`
	ClientID    string `json:"client_id"`
}

// GrantSharing lets clientID act in workspaceID with the returned key. Both
// must exist, and the workspace must not be the client's own. by is the
// operator the audit record names.
func (s *Service) GrantSharing(ctx context.Context, by audit.Person, workspaceID, clientID string) (Grant, error) {
	if by == (audit.Person{}) {
		return Grant{}, audit.ErrNoPerson
	}
	if !contract.ValidID(workspaceID) {
		return Grant{}, ErrInvalidID
	}
	if _, err := s.store.GetWorkspace(ctx, workspaceID); err != nil {
		return Grant{}, fmt.Errorf("workspace %q: %w", workspaceID, err)
	}
	c, err := s.store.GetClient(ctx, clientID)
	if err != nil {
		return Grant{}, fmt.Errorf("client %q: %w", clientID, err)
	}
	if c.WorkspaceID == workspaceID {
		return Grant{}, fmt.Errorf("client %q already belongs to workspace %q: %w", clientID, workspaceID, ErrOwnWorkspace)
	}
	g := Grant{
		GrantID:     uuid.NewString(),
		SharingKey:  credential.NewToken(sharingKeyPrefix),
		WorkspaceID: workspaceID,
		ClientID:    clientID,
	}
	now := s.now()
	err = s.store.CreateSharingGrant(ctx, store.SharingGrant{
		ID:          g.GrantID,
		WorkspaceID: workspaceID,
		ClientID:    clientID,
		KeyHash:     credential.TokenHash(g.SharingKey),
		CreatedAt:   now,
	}, operatorEvent(now, by, audit.SharingGrant, workspaceID, audit.EntityGrant, g.GrantID))
	if err != nil {
		return Grant{}, err
	}
	return g, nil
}

// GrantInfo describes a sharing grant without its key.
type GrantInfo struct {
	GrantID     string    `json:"grant_id"`
	WorkspaceID string    `json:"workspace_id"`
	ClientID    string    `json:"client_id"`
	CreatedAt   time.Time `json:"created_at"`
	RevokedAt   time.Time `json:"revoked_at,omitzero"`
}

// ListGrants returns the sharing grants f selects, in creation order,
// without their keys.
func (s *Service) ListGrants(ctx context.Context, f store.GrantFilter) ([]GrantInfo, error) {
	list, err := s.store.ListSharingGrants(ctx, f)
	if err != nil {
		return nil, err
	}
	out := make([]GrantInfo, 0, len(list))
	for _, g := range list {
		out = append(out, grantInfo(g))
	}
	return out, nil
}

// GetGrant returns the sharing grant id, without its key, or
// store.ErrNotFound.
func (s *Service) GetGrant(ctx context.Context, id string) (GrantInfo, error) {
	g, err := s.store.GetSharingGrant(ctx, id)
	if err != nil {
		return GrantInfo{}, err
	}
	return grantInfo(g), nil
}

// grantInfo is g without its key.
func grantInfo(g store.SharingGrant) GrantInfo {
	return GrantInfo{GrantID: g.ID, WorkspaceID: g.WorkspaceID, ClientID: g.ClientID, CreatedAt: g.CreatedAt, RevokedAt: g.RevokedAt}
}

// RevokeSharing revokes the grant: its key no longer logs in, and refresh
// tokens of logins made with it stop working. by is the operator the
// audit record names.
func (s *Service) RevokeSharing(ctx context.Context, by audit.Person, grantID string) error {
	if by == (audit.Person{}) {
		return audit.ErrNoPerson
	}
	g, err := s.store.GetSharingGrant(ctx, grantID)
	if err != nil {
		return err
	}
	now := s.now()
	return s.store.RevokeSharingGrant(ctx, grantID, now,
		operatorEvent(now, by, audit.SharingRevoke, g.WorkspaceID, audit.EntityGrant, grantID))
}

// Principal is who a login authenticated, and where it acts.
type Principal struct {
	ClientID    string
	WorkspaceID string
	// GrantID is the sharing grant that chose WorkspaceID, or empty.
	GrantID string
}

// Authenticate checks a client's secret and, when sharingKey is not empty,
// its sharing grant. Unknown client, wrong secret and disabled client all
// return ErrInvalidClient after the same work: one keyed hash (an unknown
// client's against a hash that matches nothing), in constant time. A
// client whose secret an earlier version stored as argon2id is verified
// that way, within a bounded wait (else ErrBusy), and its secret moved to
// the keyed hash once it verifies.
func (s *Service) Authenticate(ctx context.Context, clientID, secret, sharingKey string) (Principal, error) {
	c, err := s.store.GetClient(ctx, clientID)
	known := err == nil
	if err != nil && !errors.Is(err, store.ErrNotFound) {
		return Principal{}, err
	}
	key, err := s.secretsKeyOf(ctx)
	if err != nil {
		return Principal{}, err
	}
	encoded := c.SecretHash
	if !known {
		encoded = credential.MAC(key, credential.NewToken("")) // matches nothing a client sends
	}
	ok, err := s.verify(ctx, key, secret, encoded)
	if err != nil {
		return Principal{}, err
	}
	if !known || !ok || c.Status != store.ClientActive {
		return Principal{}, ErrInvalidClient
	}
	if !credential.IsMAC(encoded) {
		// The hash of an earlier version: the next login costs a keyed
		// hash. A failure leaves it for the next login.
		_ = s.store.ReplaceSecretHash(ctx, c.ID, encoded, credential.MAC(key, secret))
	}
	p := Principal{ClientID: c.ID, WorkspaceID: c.WorkspaceID}
	if sharingKey == "" {
		return p, nil
	}
	g, err := s.store.GetSharingGrantByKeyHash(ctx, credential.TokenHash(sharingKey))
	switch {
	case errors.Is(err, store.ErrNotFound):
		return Principal{}, ErrInvalidSharingKey
	case err != nil:
		return Principal{}, err
	case g.ClientID != c.ID || !g.RevokedAt.IsZero():
		return Principal{}, ErrInvalidSharingKey
	}
	p.WorkspaceID, p.GrantID = g.WorkspaceID, g.ID
	return p, nil
}

// verify checks secret against encoded: a keyed hash under key at once,
// an earlier version's argon2id in a slot, waited for at most s.wait.
func (s *Service) verify(ctx context.Context, key []byte, secret, encoded string) (bool, error) {
	if credential.IsMAC(encoded) {
		return credential.VerifyMAC(key, secret, encoded)
	}
	timer := time.NewTimer(s.wait)
	defer timer.Stop()
	select {
	case s.slots <- struct{}{}:
	case <-timer.C:
		return false, ErrBusy
	case <-ctx.Done():
		return false, ctx.Err()
	}
	defer func() { <-s.slots }()
	return credential.Verify(secret, encoded)
}

// CheckClient returns ErrInvalidClient unless the client exists and is active.
func (s *Service) CheckClient(ctx context.Context, clientID string) error {
	_, err := s.activeClient(ctx, clientID)
	return err
}

// activeClient returns the client, or ErrInvalidClient unless it exists
// and is active.
func (s *Service) activeClient(ctx context.Context, clientID string) (store.Client, error) {
	c, err := s.store.GetClient(ctx, clientID)
	switch {
	case errors.Is(err, store.ErrNotFound):
		return c, ErrInvalidClient
	case err != nil:
		return c, err
	case c.Status != store.ClientActive:
		return c, ErrInvalidClient
	}
	return c, nil
}

// CheckGrant returns ErrInvalidSharingKey unless the grant exists, is not
// revoked and belongs to clientID.
func (s *Service) CheckGrant(ctx context.Context, grantID, clientID string) error {
	_, err := s.grantInForce(ctx, grantID, clientID)
	return err
}

// grantInForce returns the grant, or ErrInvalidSharingKey unless it
// exists, is not revoked and belongs to clientID.
func (s *Service) grantInForce(ctx context.Context, grantID, clientID string) (store.SharingGrant, error) {
	g, err := s.store.GetSharingGrant(ctx, grantID)
	switch {
	case errors.Is(err, store.ErrNotFound):
		return g, ErrInvalidSharingKey
	case err != nil:
		return g, err
	case g.ClientID != clientID || !g.RevokedAt.IsZero():
		return g, ErrInvalidSharingKey
	}
	return g, nil
}
