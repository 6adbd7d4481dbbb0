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
