package audit

import (
	"errors"
	"net/netip"
	"time"

	"github.com/health-data-connect/hdc/internal/clientkey"
	"github.com/health-data-connect/hdc/internal/contract"
)

// Event is one thing that happened, as the trail records it. Its fields
// are all there is: no content, secret, token or key fits in one (see
// Validate).
type Event struct {
	// At is when it happened; the trail keeps it to the microsecond, in UTC.
	At      time.Time
	Action  Action
	Outcome Outcome
	// Workspace is where it happened, whose trail holds it: for a client
	// acting through a sharing grant, the workspace it acted in. Empty for
	// the installation's trail, which only LoginFailed, RetentionPrune and
	// the key actions (a key of a client the database does not know) may
	// use.
	Workspace string
	// Client is the acting client; empty for the operator, the backend's
	// own jobs, or a client the backend does not know.
	Client string
	// Grant is the sharing grant the client acted under, empty for none.
	Grant string
	// Entity is what the action concerned; zero for none, or when the id
	// the client gave is not valid.
	Entity Entity
	// Source is the client's address as the edge saw it; the zero Addr
	// when there is none.
	Source netip.Addr
	// Kid is the key an encrypted request was opened with; empty for a
	// plain request.
	Kid string
	// Request is the request's id, which the edge's and the backend's logs
	// carry too.
	Request string
	// Pruned is what a RetentionPrune removed; zero for any other action.
	Pruned Pruned
	// Count, when not 0, is how many refusals of one kind, from one
	// source and actor, the record stands for (2 or more): the ones after
	// the first of a window, which the first record already shows
	// (package audit/window). 0 is the one event.
	Count int64
	// Replaced are the kids of the keys a rotation moved to retiring
	// (KeyRotate only), so that the record is found by the key it
	// replaced as by the key it made (Entity).
	Replaced []string
	// Weakened is what a rotation's new key gives up against the key it
	// replaced, which the operator allowed (KeyRotate only):
	// clientkey.LostEnc, clientkey.LostFreshness.
	Weakened []string
	// Person is who made an operator's change or read the trail (the
	// actions whose rule names the roles it may have); zero for a
	// client's action, the backend's own, and the records written before
	// persons were named.
	Person Person
	// Reason is why a subscription was disabled (DeliveryDisabled: "gone",
	// "failing"); empty for any other action.
	Reason string
	// Changes are the fields an operator's change moved, each with its
	// value before and after, in the order the change names them; nil
	// for the actions that record none (see Change).
	Changes []Change
	// Owner is the client whose key a key action (KeyAdd, KeyRotate,
	// KeyRetire) concerns, by its id; empty for any other action, and
	// for a key whose client id is not a UUID (a registry file's key of
	// another installation's client) or the records written before it
	// was named (see KeyOwner).
	Owner string
}

// KeyOwner returns client, the client id of a key, as a key action's
// Owner: itself when it is a UUID, as the database's clients' ids are,
// else "" (a registry file may hold keys of clients named otherwise,
// which a record does not quote).
func KeyOwner(client string) string {
	if contract.IsUUID(client) {
		return client
	}
	return ""
}

// MaxReplaced bounds the kids a rotation's record names: the active keys
// of one client, of which there is one but after an import.
const MaxReplaced = 64

// EntityKind says what an entity's ID names.
type EntityKind string

// Entity kinds; the action decides which one its event may carry.
const (
	EntityCareContext  EntityKind = "care_context" // a record, by its care context id
	EntitySubscription EntityKind = "subscription"
	EntityClient       EntityKind = "client"
	EntityGrant        EntityKind = "grant"
	EntityKey          EntityKind = "key"                 // by its kid
	EntityDataKey      EntityKind = "data_key"            // a data key of the store (package keeper), by its id
	EntityWorkspace    EntityKind = "workspace"           // by its id: the trail a person read
	EntityCertificate  EntityKind = "certificate"         // a certificate of the hop's authority, by its serial in hex
	EntityDestination  EntityKind = "webhook_destination" // a private receiver granted to a workspace
)

// Entity is what an action concerned.
type Entity struct {
	Kind EntityKind
	// ID is a UUID, or a kid for EntityKey, a data key's id for
	// EntityDataKey, a workspace id for EntityWorkspace, a serial in
	// lower-case hex for EntityCertificate.
	ID string
}

// Pruned is the prefix of a chain that retention removed.
type Pruned struct {
	// From is the seq of the first record removed.
	From int64
	// Last is the last record removed, which the first one kept follows.
	Last Link
	// Before is the bound the prune removed records to: every record it
	// removed happened before it, by the record's own time. Zero in the
	// prune records of versions that did not say.
	Before time.Time
}

// Validate reports whether e may be recorded: a known action and outcome,
// a time within years 1 to 9999, ids of the right syntax, a source
// address without zone and not IPv4-mapped (Next unmaps it), the entity kind
// and the workspace the action allows, Pruned exactly for RetentionPrune.
// Its errors never quote a value.
func (e Event) Validate() error {
	r, ok := rules[e.Action]
	if !ok {
		return errors.New("audit: unknown action")
	}
	checks := []struct {
		ok   bool
		what string
	}{
		{e.Outcome.Valid(), "unknown outcome"},
		{!r.refusal || e.Outcome != Success, "a refusal cannot succeed"},
		{!e.At.IsZero() && e.At.Year() >= 1 && e.At.Year() <= 9999, "time missing or out of range"},
		{contract.ValidID(e.Workspace) || e.Workspace == "" && r.anywhere, "workspace id invalid or missing"},
		{optional(e.Client, contract.IsUUID), "client id is not a UUID"},
		{optional(e.Grant, contract.IsUUID) && (e.Grant == "" || e.Client != ""), "grant id is not a UUID, or has no client"},
		{e.Entity.valid(r.entity), "entity of the wrong kind or syntax"},
		{e.Source.Zone() == "" && !e.Source.Is4In6(), "source address has a zone or is IPv4-mapped"},
		{optional(e.Kid, clientkey.ValidKid), "kid invalid"},
		{optional(e.Request, contract.IsUUID), "request id is not a UUID"},
		{e.Pruned.valid(e.Action == RetentionPrune), "pruned range invalid, or on another action"},
		{!e.Pruned.Before.After(e.At), "pruned to a bound after the prune"},
		{e.Count == 0 || e.Count >= 2 && e.Outcome == Denied, "count below 2, or on no refusal"},
		{e.Action == KeyRotate || e.Replaced == nil && e.Weakened == nil, "replaced or weakened keys on another action than a rotation"},
		{validKids(e.Replaced), "replaced kids invalid, repeated or too many"},
		{validLosses(e.Weakened), "weakened: unknown, repeated or empty"},
		{e.Person.valid(r.by), "person invalid, or of a role the action does not take"},
		{e.Client == "" || e.Person == (Person{}), "both a client and a person"},
		{e.Reason == "" || e.Action == DeliveryDisabled && (e.Reason == "gone" || e.Reason == "failing"), "reason unknown, or on another action"},
		{validChanges(e.Changes, r.changes), "changes: too many, repeated, of a field the action does not change, or a value out of bounds"},
		{optional(e.Owner, contract.IsUUID) && (e.Owner == "" || r.entity == EntityKey), "owner is not a UUID, or on an action on no key"},
	}
	for _, c := range checks {
		if !c.ok {
			return errors.New("audit: " + string(e.Action) + ": " + c.what)
		}
	}
	return nil
}

// validKids reports whether kids may be a record's Replaced: nil, or 1 to
// MaxReplaced distinct kids.
func validKids(kids []string) bool {
	if kids == nil {
		return true
	}
	return len(kids) > 0 && len(kids) <= MaxReplaced && distinct(kids, clientkey.ValidKid)
}

// validLosses reports whether lost may be a record's Weakened: nil, or
// distinct losses of clientkey's.
func validLosses(lost []string) bool {
	known := func(l string) bool { return l == clientkey.LostEnc || l == clientkey.LostFreshness }
	return lost == nil || len(lost) > 0 && distinct(lost, known)
}

// distinct reports whether every one of list passes valid, once.
func distinct(list []string, valid func(string) bool) bool {
	seen := make(map[string]bool, len(list))
	for _, s := range list {
		if !valid(s) || seen[s] {
			return false
		}
		seen[s] = true
	}
	return true
}

// optional reports whether s is empty or passes valid.
func optional(s string, valid func(string) bool) bool { return s == "" || valid(s) }

// valid reports whether x may be the entity of an action concerning kind:
// none, or one of that kind with an id of its syntax.
func (x Entity) valid(kind EntityKind) bool {
	switch {
	case x == Entity{}:
		return true
	case x.Kind != kind || kind == "":
		return false
	case kind == EntityKey, kind == EntityDataKey:
		return clientkey.ValidKid(x.ID)
	case kind == EntityWorkspace:
		return contract.ValidID(x.ID)
	case kind == EntityCertificate:
		return validSerial(x.ID)
	}
	return contract.IsUUID(x.ID)
}

// valid reports whether p is a range that a prune may name (want) or
// zero (!want).
func (p Pruned) valid(want bool) bool {
	if !want {
		return p == Pruned{}
	}
	return p.From >= 1 && p.Last.Seq >= p.From && p.Last.Hash != Hash{}
}
