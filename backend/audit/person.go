package audit

import (
	"context"
	"errors"
	"os"
	"os/user"
	"slices"

	"github.com/health-data-connect/hdc/internal/contract"
)

// Person is who made an operator's change, or read the trail: the Admin
// API's caller, as its certificate names it, or the local user of a
// command that opened the database itself (hdc's direct mode).
type Person struct {
	// Name is the certificate's subject (its common name), or user@host
	// in direct mode: contract.ValidPersonName.
	Name string
	// Serial is the certificate's serial number in lower-case hex, which
	// tells two certificates of one name apart; empty in direct mode.
	Serial string
	// Role is the certificate's role, contract.RoleOperator or
	// contract.RoleAuditor; RoleOperator in direct mode.
	Role contract.Role
	// Direct marks a command that opened the database and the keeper
	// itself, not through the Admin API: bootstrap and break-glass.
	Direct bool
}

// ErrNoPerson is the answer of an operator's change that names no person:
// every change an operator makes is recorded with its author.
var ErrNoPerson = errors.New("audit: an operator's change names the person who makes it")

// maxSerial is the longest serial in hex: RFC 5280 allows 20 octets.
const maxSerial = 40

// valid reports whether p may be the person of an action that persons
// may carry: none, or a valid name with a role of roles, and a serial
// exactly when it came through the API.
func (p Person) valid(roles []contract.Role) bool {
	if p == (Person{}) {
		return true
	}
	return contract.ValidPersonName(p.Name) && slices.Contains(roles, p.Role) &&
		(p.Direct && p.Serial == "" && p.Role == contract.RoleOperator || !p.Direct && validSerial(p.Serial))
}

// validSerial reports whether s is a serial number as Person holds it.
func validSerial(s string) bool {
	if len(s) == 0 || len(s) > maxSerial {
		return false
	}
	for i := 0; i < len(s); i++ {
		if c := s[i]; !('0' <= c && c <= '9' || 'a' <= c && c <= 'f') {
			return false
		}
	}
	return true
}

type personKey struct{}

// WithPerson returns ctx carrying p, the person a request or a command acts
// for: the Admin API puts its caller there, hdc's direct mode the local
// user, and the services that record an operator's change or a read take
// it from there (PersonFrom).
func WithPerson(ctx context.Context, p Person) context.Context {
	return context.WithValue(ctx, personKey{}, p)
}

// PersonFrom returns the person ctx carries, ErrNoPerson when none.
func PersonFrom(ctx context.Context) (Person, error) {
	p, ok := ctx.Value(personKey{}).(Person)
	if !ok || p == (Person{}) {
		return Person{}, ErrNoPerson
	}
	return p, nil
}

// LocalOperator is the person a command run on this machine against the
// database directly (hdc's direct mode, hdc up) records as the author of
// its changes: user@host (the login name, else $USER, and the host's
// name), an operator, marked direct. A character a person's name may not
// hold (contract.ValidPersonName) becomes '_', and the name is cut to its
// length.
func LocalOperator() Person {
	name := "unknown"
	if u, err := user.Current(); err == nil && u.Username != "" {
		name = u.Username
	} else if v := os.Getenv("USER"); v != "" {
		name = v
	}
	host, err := os.Hostname()
	if err != nil || host == "" {
		host = "localhost"
	}
	return Person{Name: personName(name + "@" + host), Role: contract.RoleOperator, Direct: true}
}

// personName returns s with every character a person's name may not hold
// replaced by '_', cut to contract.MaxPersonName.
func personName(s string) string {
	b := []byte(s)
	for i, c := range b {
		if !contract.ValidPersonName(string(c)) {
			b[i] = '_'
		}
	}
	return string(b[:min(len(b), contract.MaxPersonName)])
}
