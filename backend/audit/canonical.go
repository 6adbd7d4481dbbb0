package audit

import (
	"bytes"
	"encoding/hex"
	"encoding/json"
	"errors"
	"net/netip"
	"time"

	"github.com/health-data-connect/hdc/internal/contract"
)

// The canonical form is JSON written by encoding/json from the struct
// below: members in the struct's order, no spaces, optional members left
// out when empty. It is deterministic without RFC 8785 (JCS) because it
// only ever holds what Validate lets through, integers and ASCII strings
// of ids, codes, hex and times in one fixed layout, and the values of a
// change (valid UTF-8 without control characters), which encoding/json
// writes one way only; JCS would matter for JSON written by others, and
// Parse accepts nothing but this form (it writes what it read again and
// compares). The format is versioned ("v") so that a later one can be
// read beside it: records are never rewritten.
//
// Member order, names and layouts are the format: changing any of them
// breaks every stored chain (TestCanonicalGolden holds them).

// The versions of the canonical form: a record of format 1 is linked to
// its successor by its SHA-256, one of format 2 by an HMAC-SHA-256 under
// the chain's key (Chain). The members are the same.
const (
	formatHashed = 1
	formatKeyed  = 2
)

// timeLayout is the canonical time: UTC, microseconds, fixed width.
const timeLayout = "2006-01-02T15:04:05.000000Z"

type canonical struct {
	V         int              `json:"v"`
	Workspace string           `json:"workspace"`
	Seq       int64            `json:"seq"`
	Prev      string           `json:"prev"`
	At        string           `json:"at"`
	Action    Action           `json:"action"`
	Outcome   Outcome          `json:"outcome"`
	Client    string           `json:"client,omitempty"`
	Grant     string           `json:"grant,omitempty"`
	Entity    *canonicalEntity `json:"entity,omitempty"`
	Source    string           `json:"source,omitempty"`
	Kid       string           `json:"kid,omitempty"`
	Request   string           `json:"request,omitempty"`
	Pruned    *canonicalPruned `json:"pruned,omitempty"`
	// Count is left out at 0, so that records without one keep the form
	// they had before it existed; Replaced and Weakened likewise when
	// empty, and Person when zero.
	Count    int64            `json:"count,omitempty"`
	Replaced []string         `json:"replaced,omitempty"`
	Weakened []string         `json:"weakened,omitempty"`
	Person   *canonicalPerson `json:"person,omitempty"`
	Reason   string           `json:"reason,omitempty"`
	// Changes are left out when empty, so that the records written
	// before they existed keep their form.
	Changes []canonicalChange `json:"changes,omitempty"`
	// Owner is left out when empty, so that the key actions' records
	// written before it existed keep their form.
	Owner string `json:"owner,omitempty"`
}

// canonicalChange is a Change; Before and After are left out when
// empty (a field not set before, or removed).
type canonicalChange struct {
	Field  string `json:"field"`
	Before string `json:"before,omitempty"`
	After  string `json:"after,omitempty"`
}

type canonicalPerson struct {
	Name   string        `json:"name"`
	Serial string        `json:"serial,omitempty"`
	Role   contract.Role `json:"role"`
	Direct bool          `json:"direct,omitempty"`
}

type canonicalEntity struct {
	Kind EntityKind `json:"kind"`
	ID   string     `json:"id"`
}

type canonicalPruned struct {
	From    int64  `json:"from"`
	Through int64  `json:"through"`
	Last    string `json:"last"`
	// Before is left out when zero, so that the prune records written
	// before it existed keep their form.
	Before string `json:"before,omitempty"`
}

// Canonical returns r's canonical form: what the store keeps and what
// is hashed.
func (r Record) Canonical() []byte {
	c := canonical{
		V: formatHashed, Workspace: r.Workspace, Seq: r.Seq, Prev: r.Prev.String(),
		At: r.At.UTC().Format(timeLayout), Action: r.Action, Outcome: r.Outcome,
		Client: r.Client, Grant: r.Grant, Kid: r.Kid, Request: r.Request,
	}
	if r.Entity != (Entity{}) {
		c.Entity = &canonicalEntity{Kind: r.Entity.Kind, ID: r.Entity.ID}
	}
	if r.Source.IsValid() {
		c.Source = r.Source.String()
	}
	if r.Pruned != (Pruned{}) {
		c.Pruned = &canonicalPruned{From: r.Pruned.From, Through: r.Pruned.Last.Seq, Last: r.Pruned.Last.Hash.String()}
		if !r.Pruned.Before.IsZero() {
			c.Pruned.Before = r.Pruned.Before.UTC().Format(timeLayout)
		}
	}
	c.Count, c.Replaced, c.Weakened, c.Reason, c.Owner = r.Count, r.Replaced, r.Weakened, r.Reason, r.Owner
	if p := r.Person; p != (Person{}) {
		c.Person = &canonicalPerson{Name: p.Name, Serial: p.Serial, Role: p.Role, Direct: p.Direct}
	}
	for _, ch := range r.Changes {
		c.Changes = append(c.Changes, canonicalChange(ch))
	}
	if r.Keyed {
		c.V = formatKeyed
	}
	b, err := json.Marshal(c)
	if err != nil {
		panic("audit: encoding a record: " + err.Error()) // strings and integers always encode
	}
	return b
}

// Parse reads a record from its canonical form, as the store keeps it.
// Anything else is refused: another member order, spacing or escaping,
// an unknown or repeated member, a record that is not valid.
func Parse(b []byte) (Record, error) {
	var c canonical
	if err := json.Unmarshal(b, &c); err != nil {
		return Record{}, errors.New("audit: not a record's JSON")
	}
	r, err := c.record()
	if err != nil {
		return Record{}, err
	}
	if err := r.Validate(); err != nil {
		return Record{}, err
	}
	if !bytes.Equal(r.Canonical(), b) {
		return Record{}, errors.New("audit: not a record's canonical form")
	}
	return r, nil
}

// record converts the members to a record, which the caller validates.
func (c canonical) record() (Record, error) {
	if c.V != formatHashed && c.V != formatKeyed {
		return Record{}, errors.New("audit: unknown record format")
	}
	r := Record{Seq: c.Seq, Keyed: c.V == formatKeyed, Event: Event{
		Workspace: c.Workspace, Action: c.Action, Outcome: c.Outcome,
		Client: c.Client, Grant: c.Grant, Kid: c.Kid, Request: c.Request, Count: c.Count,
		Replaced: c.Replaced, Weakened: c.Weakened, Reason: c.Reason, Owner: c.Owner,
	}}
	var errs [5]error
	r.Prev, errs[0] = parseHash(c.Prev)
	r.At, errs[1] = time.Parse(timeLayout, c.At)
	if c.Source != "" {
		r.Source, errs[2] = netip.ParseAddr(c.Source)
	}
	if c.Entity != nil {
		r.Entity = Entity{Kind: c.Entity.Kind, ID: c.Entity.ID}
	}
	for _, ch := range c.Changes {
		r.Changes = append(r.Changes, Change(ch))
	}
	if p := c.Person; p != nil {
		r.Person = Person{Name: p.Name, Serial: p.Serial, Role: p.Role, Direct: p.Direct}
	}
	if p := c.Pruned; p != nil {
		r.Pruned = Pruned{From: p.From, Last: Link{Seq: p.Through}}
		r.Pruned.Last.Hash, errs[3] = parseHash(p.Last)
		if p.Before != "" {
			r.Pruned.Before, errs[4] = time.Parse(timeLayout, p.Before)
		}
	}
	if errors.Join(errs[:]...) != nil {
		return Record{}, errors.New("audit: a record's hash, time or address does not parse")
	}
	return r, nil
}

// parseHash reads a hash in hex.
func parseHash(s string) (Hash, error) {
	b, err := hex.DecodeString(s)
	if err != nil {
		return Hash{}, err
	}
	return HashFrom(b)
}
