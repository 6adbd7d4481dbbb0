package storetest

import (
	"bytes"
	"slices"
	"testing"
	"time"

	"github.com/health-data-connect/hdc/backend/audit"
	"github.com/health-data-connect/hdc/backend/store"
)

// revocation is operatorAlice's revocation of the certificate serial.
func revocation(serial string, d time.Duration) (store.RevokedCertificate, audit.Event) {
	return store.RevokedCertificate{Serial: serial, Name: "bob@example.org", Role: "operator", RevokedAt: at(d), RevokedBy: operatorAlice.Name},
		audit.Event{At: at(d), Action: audit.CertificateRevoke, Outcome: audit.Success,
			Entity: audit.Entity{Kind: audit.EntityCertificate, ID: serial}, Person: operatorAlice}
}

// testRevocations: a revoked serial is listed once with its first
// revocation, each revocation is recorded, and one whose record cannot be
// written revokes nothing.
func testRevocations(t *testing.T, s Store) {
	c1, e1 := revocation("0a", 0)
	must(t, s.RevokeCertificate(ctx(t), c1, e1))
	again, e2 := revocation("0a", time.Minute)
	must(t, s.RevokeCertificate(ctx(t), again, e2))
	c2, e3 := revocation("ff01", time.Hour)
	must(t, s.RevokeCertificate(ctx(t), c2, e3))
	bad, ebad := revocation("0b", time.Hour)
	ebad.Person = audit.Person{}
	ebad.Action = "revoke"
	if err := s.RevokeCertificate(ctx(t), bad, ebad); err == nil {
		t.Fatal("a revocation whose record is invalid was made")
	}
	list, err := s.RevokedCertificates(ctx(t))
	must(t, err)
	if !slices.Equal(list, []store.RevokedCertificate{c1, c2}) {
		t.Fatalf("RevokedCertificates = %+v, want %+v", list, []store.RevokedCertificate{c1, c2})
	}
	rs, err := s.ListAudit(ctx(t), store.AuditFilter{Agent: operatorAlice.Name})
	must(t, err)
	if len(rs) != 3 || rs[0].Entity.ID != "0a" || rs[1].Entity.ID != "0a" || rs[2].Entity.ID != "ff01" {
		t.Fatalf("the installation's trail holds %+v; want the three revocations", rs)
	}
}

// testIdempotency: a key is claimed once, per person; the claim holds its
// answer once finished, is free again once abandoned, and is forgotten
// once expired.
func testIdempotency(t *testing.T, s Store) {
	alice, bob := store.IdempotencyKey{Person: "alice@example.org", Key: "k1"}, store.IdempotencyKey{Person: "bob@example.org", Key: "k1"}
	h1, h2 := []byte{1, 2, 3}, []byte{4, 5, 6}
	begin := func(k store.IdempotencyKey, h []byte, d time.Duration) (store.Idempotent, bool) {
		held, began, err := s.BeginIdempotent(ctx(t), k, h, at(d), at(d-24*time.Hour))
		must(t, err)
		return held, began
	}
	if _, began := begin(alice, h1, 0); !began {
		t.Fatal("a new key was not claimed")
	}
	if held, began := begin(alice, h2, time.Second); began || held.Status != 0 || !bytes.Equal(held.Hash, h1) || !held.CreatedAt.Equal(at(0)) {
		t.Fatalf("a claimed key under way: %+v, began %v", held, began)
	}
	if _, began := begin(bob, h2, time.Second); !began {
		t.Fatal("another person's key of the same name was not claimed")
	}
	must(t, s.FinishIdempotent(ctx(t), alice, 201, []byte(`{"id":"x"}`)))
	if held, began := begin(alice, h1, time.Minute); began || held.Status != 201 || string(held.Body) != `{"id":"x"}` {
		t.Fatalf("a finished key: %+v, began %v", held, began)
	}
	must(t, s.AbandonIdempotent(ctx(t), bob))
	if _, began := begin(bob, h1, time.Minute); !began {
		t.Fatal("an abandoned key was not claimed again")
	}
	if _, began := begin(alice, h2, 25*time.Hour); !began {
		t.Fatal("an expired key was not claimed again")
	}
	if err := s.FinishIdempotent(ctx(t), store.IdempotencyKey{Person: "carol", Key: "k"}, 200, nil); err == nil {
		t.Fatal("an answer was stored for a key never claimed")
	}
}
