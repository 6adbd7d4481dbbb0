package admin

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/health-data-connect/hdc/backend/audit"
	"github.com/health-data-connect/hdc/backend/store"
)

// fakeRevocations is a deny-list that counts its reads and fails when
// told to.
type fakeRevocations struct {
	list  []store.RevokedCertificate
	reads int
	fail  bool
}

func (f *fakeRevocations) RevokeCertificate(context.Context, store.RevokedCertificate, audit.Event) error {
	return errors.New("not here")
}

func (f *fakeRevocations) RevokedCertificates(context.Context) ([]store.RevokedCertificate, error) {
	f.reads++
	if f.fail {
		return nil, errors.New("the store does not answer")
	}
	return f.list, nil
}

// TestDenyList: a copy serves for its TTL and is read again after; a
// revocation made here is in force at once; a store that fails leaves the
// last copy in force, and with none it fails closed.
func TestDenyList(t *testing.T) {
	t.Parallel()
	st := &fakeRevocations{list: []store.RevokedCertificate{{Serial: "a1"}}}
	d := NewDenyList(st, 2*time.Second)
	now := time.Unix(1000, 0)
	d.now = func() time.Time { return now }
	check := func(step, serial string, want bool, reads int) {
		t.Helper()
		got, err := d.Revoked(t.Context(), serial)
		if err != nil || got != want || st.reads != reads {
			t.Fatalf("%s: Revoked(%s) = %v, %v after %d reads; want %v after %d", step, serial, got, err, st.reads, want, reads)
		}
	}
	check("the first check", "a1", true, 1)
	check("within the TTL", "b2", false, 1)
	st.list = append(st.list, store.RevokedCertificate{Serial: "b2"})
	check("still within the TTL", "b2", false, 1)
	now = now.Add(2 * time.Second)
	check("after the TTL", "b2", true, 2)
	st.list = append(st.list, store.RevokedCertificate{Serial: "c3"})
	d.Forget()
	check("after a revocation here", "c3", true, 3)
	st.fail = true
	now = now.Add(time.Minute)
	check("the store failing, with a copy", "c3", true, 4)
	check("the copy serves another TTL", "a1", true, 4)
	d.Forget()
	if _, err := d.Revoked(t.Context(), "a1"); err == nil {
		t.Fatal("with no copy and a store that fails, a check passed")
	}
}
