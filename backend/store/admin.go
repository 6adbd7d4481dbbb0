package store

import (
	"context"
	"time"

	"github.com/health-data-connect/hdc/backend/audit"
)

// Revocations is the deny-list of the hop's certificates: a certificate of
// the hop's authority whose serial is on it is refused on both listeners,
// whatever its role, until it expires (package admin serves the list, the
// backend's listeners read it).
type Revocations interface {
	// RevokeCertificate puts c on the list and appends e, its audit
	// record (audit.CertificateRevoke), in one transaction. A serial on
	// the list already keeps its first revocation, and e is appended
	// again.
	RevokeCertificate(ctx context.Context, c RevokedCertificate, e audit.Event) error
	// RevokedCertificates returns the list, by serial.
	RevokedCertificates(ctx context.Context) ([]RevokedCertificate, error)
}

// RevokedCertificate is a certificate on the deny-list.
type RevokedCertificate struct {
	// Serial is the certificate's serial number in lower-case hex.
	Serial string
	// Name and Role are the certificate's subject and role as the
	// operator who revoked it gave them ("" when not given): what the
	// list shows, never what the check reads.
	Name, Role string
	RevokedAt  time.Time
	// RevokedBy is the name of the person who revoked it.
	RevokedBy string
}

// People are the persons who used the Admin API, one row per certificate
// (by serial): the backends record each person they serve, at most about
// once a minute per certificate, for operators to see who holds access
// and revoke what should not (package admin).
type People interface {
	// SeePerson records that a backend served p at p.LastSeen: a serial
	// new to the list is added, first and last seen then; a known one's
	// last seen is moved to p.LastSeen only when it is before stale (a
	// write at most once per interval, however many backends serve the
	// person), and never back.
	SeePerson(ctx context.Context, p Person, stale time.Time) error
	// People returns every person seen, by name then serial (byte order).
	People(ctx context.Context) ([]Person, error)
}

// Person is a certificate that used the Admin API: its serial (lower-case
// hex), the name and role it names, when a backend first and last served
// it (to the interval SeePerson writes at).
type Person struct {
	Serial, Name, Role  string
	FirstSeen, LastSeen time.Time
}

// Idempotency keeps the answers of changes made under an Idempotency-Key
// (the Admin API's, and the public API's redelivery), so that a change
// repeated with the same key is answered as the first was and made once.
type Idempotency interface {
	// BeginIdempotent claims k for a request whose hash is hash at now,
	// forgetting first every claim older than expire; it returns true when
	// the claim is new, else false and the claim that holds k (its
	// answer's Status is 0 while that request is under way).
	BeginIdempotent(ctx context.Context, k IdempotencyKey, hash []byte, now, expire time.Time) (Idempotent, bool, error)
	// FinishIdempotent stores the answer of k's request.
	FinishIdempotent(ctx context.Context, k IdempotencyKey, status int, body []byte) error
	// AbandonIdempotent forgets k's claim, whose request failed without an
	// answer worth repeating: the key may be used again.
	AbandonIdempotent(ctx context.Context, k IdempotencyKey) error
}

// IdempotencyKey names a claim: its owner's own key, so that two owners'
// keys never meet. Person is the owner: a person of the Admin API, or a
// client of the public API (web.Idempotent's Owner names it).
type IdempotencyKey struct {
	Person, Key string
}

// Idempotent is a claim of an Idempotency-Key and, once its request
// answered, the answer. The body is stored sealed (package sealed): an
// answer may hold a secret shown once.
type Idempotent struct {
	Hash      []byte
	Status    int
	Body      []byte
	CreatedAt time.Time
}

// ClientFilter selects clients for ListClients, a page in creation order,
// or in name order when it selects by a name's prefix.
type ClientFilter struct {
	WorkspaceID string       // "" for every workspace
	Status      ClientStatus // "" for any
	// NamePrefix selects the clients whose name starts with it, letter
	// case aside (contract.FoldName); "" for any.
	NamePrefix string
	// Labels select the clients that have every one of them; nil for any.
	Labels []Label
	// After is where the page starts: after the client created at
	// After.CreatedAt with id After.ID, or with a name prefix after the
	// client of folded name After.Name and id After.ID (zero: from the
	// first).
	After ClientCursor
	Limit int // 0 for no bound
}

// Label is a client's label, key=value.
type Label struct{ Key, Value string }

// ClientCursor is a position in an order of ListClients: by creation time
// and id, or by folded name and id.
type ClientCursor struct {
	CreatedAt time.Time
	Name      string
	ID        string
}

// Cursor is a position in a list ordered by creation time, then id: the
// item created at CreatedAt with id ID.
type Cursor struct {
	CreatedAt time.Time
	ID        string
}
