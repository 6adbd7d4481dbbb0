package store

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/health-data-connect/hdc/backend/audit"
)

// fakeAudit is an AuditTx that keeps the records appended.
type fakeAudit struct{ appended []audit.Record }

func (f *fakeAudit) LockAuditHead(_ context.Context, ws string) (audit.Head, error) {
	return audit.Head{Workspace: ws}, nil
}

func (f *fakeAudit) InsertAudit(_ context.Context, r audit.Record, _ []byte, _ audit.Hash) error {
	f.appended = append(f.appended, r)
	return nil
}

func (f *fakeAudit) AuditChain() *audit.Chain { return nil }

// actions returns the actions of the records appended.
func (f *fakeAudit) actions() []audit.Action {
	var out []audit.Action
	for _, r := range f.appended {
		out = append(out, r.Action)
	}
	return out
}

// fakeRotation is a RotationTx over one token, recording what was done.
type fakeRotation struct {
	fakeAudit
	token      PresentedToken
	lookupErr  error
	lostRace   bool // another rotation consumed the token after the read
	consumed   bool
	inserted   *RefreshToken
	revokedFam string
}

func (f *fakeRotation) LockToken(context.Context, []byte) (PresentedToken, error) {
	return f.token, f.lookupErr
}

func (f *fakeRotation) ConsumeToken(context.Context, []byte, time.Time) (bool, error) {
	if f.lostRace {
		return false, nil
	}
	f.consumed = true
	return true, nil
}

func (f *fakeRotation) InsertToken(_ context.Context, t RefreshToken) error {
	f.inserted = &t
	return nil
}

func (f *fakeRotation) RevokeFamily(_ context.Context, id string, _ time.Time) error {
	f.revokedFam = id
	return nil
}

func TestRotate(t *testing.T) {
	now := time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC)
	live := PresentedToken{Family: RefreshFamily{ID: "fam", ClientID: "c1", WorkspaceID: "w1"}, ExpiresAt: now.Add(time.Hour)}
	with := func(change func(*PresentedToken)) PresentedToken { p := live; change(&p); return p }
	tests := []struct {
		name      string
		tx        fakeRotation
		want      error
		consumed  bool
		revoked   bool
		committed bool // the transaction's function returned nil
		audited   audit.Action
	}{
		{"rotated", fakeRotation{token: live}, nil, true, false, true, audit.Refresh},
		{"unknown", fakeRotation{lookupErr: ErrNotFound}, ErrNotFound, false, false, false, ""},
		{"another client's", fakeRotation{token: with(func(p *PresentedToken) { p.Family.ClientID = "c2" })}, ErrNotFound, false, false, false, ""},
		{"revoked family", fakeRotation{token: with(func(p *PresentedToken) { p.Family.RevokedAt = now })}, ErrNotFound, false, false, false, ""},
		{"expired", fakeRotation{token: with(func(p *PresentedToken) { p.ExpiresAt = now })}, ErrNotFound, false, false, false, ""},
		{"used before: reuse", fakeRotation{token: with(func(p *PresentedToken) { p.Used = true })}, ErrTokenReused, false, true, true, audit.RefreshReuse},
		{"consumed by a concurrent rotation: reuse", fakeRotation{token: live, lostRace: true}, ErrTokenReused, false, true, true, audit.RefreshReuse},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			committed := false
			inTx := func(fn func(RotationTx) error) error {
				err := fn(&tt.tx)
				committed = err == nil
				return err
			}
			f, err := Rotate(context.Background(), inTx, "c1", []byte("h"), RefreshToken{Hash: []byte("next")}, now,
				audit.Event{At: now, Action: audit.Refresh, Client: "5a1c9a52-3b7e-4d0e-9f43-2f8e1c6b7a01"})
			if !errors.Is(err, tt.want) {
				t.Fatalf("err = %v, want %v", err, tt.want)
			}
			if tt.tx.consumed != tt.consumed || (tt.tx.revokedFam == "fam") != tt.revoked || committed != tt.committed {
				t.Fatalf("consumed %v revoked %q committed %v", tt.tx.consumed, tt.tx.revokedFam, committed)
			}
			if tt.want == nil && (f.ID != "fam" || tt.tx.inserted == nil || tt.tx.inserted.FamilyID != "fam") {
				t.Fatalf("family %+v, next token %+v", f, tt.tx.inserted)
			}
			switch got := tt.tx.actions(); {
			case tt.audited == "" && len(got) != 0, tt.audited != "" && (len(got) != 1 || got[0] != tt.audited):
				t.Fatalf("audited %v, want %q", got, tt.audited)
			case tt.audited != "" && tt.tx.appended[0].Workspace != "w1":
				t.Fatalf("audited in workspace %q, want the family's", tt.tx.appended[0].Workspace)
			}
			if tt.want != nil && tt.tx.inserted != nil {
				t.Fatal("a refused rotation stored a token")
			}
		})
	}
}
