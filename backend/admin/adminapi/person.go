package adminapi

import "time"

// Person is a person as the API shows one: the name and serial of their
// certificate, its role, and whether they act directly on the database
// (hdc's direct mode) rather than through the API.
type Person struct {
	Name   string `json:"name"`
	Role   string `json:"role"`
	Serial string `json:"serial,omitempty"`
	Direct bool   `json:"direct,omitempty"`
}

// Revocation is a certificate on the deny-list, as the API shows it and
// as an operator asks for it (Serial, and optionally the Name and Role the
// list then shows).
type Revocation struct {
	Serial    string    `json:"serial"`
	Name      string    `json:"name,omitempty"`
	Role      string    `json:"role,omitempty"`
	RevokedAt time.Time `json:"revoked_at,omitzero"`
	RevokedBy string    `json:"revoked_by,omitempty"`
}

// PersonSeen is a certificate that used the Admin API, as ListPeople
// lists it: the name, role and serial it names, when a backend first and
// last served it (to about a minute: a backend writes a certificate's
// last use at most once a minute), and whether it is on the deny-list.
type PersonSeen struct {
	Name      string    `json:"name"`
	Role      string    `json:"role"`
	Serial    string    `json:"serial"`
	FirstSeen time.Time `json:"first_seen"`
	LastSeen  time.Time `json:"last_seen"`
	Revoked   bool      `json:"revoked"`
}
