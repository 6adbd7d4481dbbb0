package store

import (
	"context"
	"errors"
	"testing"
	"time"
)

// fakeRotation is a RotationTx over one token, recording what was done.
type fakeRotation struct {
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
	live := PresentedToken{Family: RefreshFamily{ID: "fam", ClientID: "c1"}, ExpiresAt: now.Add(time.Hour)}
	with := func(change func(*PresentedToken)) PresentedToken { p := live; change(&p); return p }
	tests := []struct {
		name      string
		tx        fakeRotation
		want      error
		consumed  bool
		revoked   bool
		committed bool // the transaction's function returned nil
	}{
		{"rotated", fakeRotation{token: live}, nil, true, false, true},
		{"unknown", fakeRotation{lookupErr: ErrNotFound}, ErrNotFound, false, false, false},
		{"another client's", fakeRotation{token: with(func(p *PresentedToken) { p.Family.ClientID = "c2" })}, ErrNotFound, false, false, false},
		{"revoked family", fakeRotation{token: with(func(p *PresentedToken) { p.Family.RevokedAt = now })}, ErrNotFound, false, false, false},
		{"expired", fakeRotation{token: with(func(p *PresentedToken) { p.ExpiresAt = now })}, ErrNotFound, false, false, false},
		{"used before: reuse", fakeRotation{token: with(func(p *PresentedToken) { p.Used = true })}, ErrTokenReused, false, true, true},
		{"consumed by a concurrent rotation: reuse", fakeRotation{token: live, lostRace: true}, ErrTokenReused, false, true, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			committed := false
			inTx := func(fn func(RotationTx) error) error {
				err := fn(&tt.tx)
				committed = err == nil
				return err
			}
			f, err := Rotate(context.Background(), inTx, "c1", []byte("h"), RefreshToken{Hash: []byte("next")}, now)
			if !errors.Is(err, tt.want) {
				t.Fatalf("err = %v, want %v", err, tt.want)
			}
			if tt.tx.consumed != tt.consumed || (tt.tx.revokedFam == "fam") != tt.revoked || committed != tt.committed {
				t.Fatalf("consumed %v revoked %q committed %v", tt.tx.consumed, tt.tx.revokedFam, committed)
			}
			if tt.want == nil && (f.ID != "fam" || tt.tx.inserted == nil || tt.tx.inserted.FamilyID != "fam") {
				t.Fatalf("family %+v, next token %+v", f, tt.tx.inserted)
			}
			if tt.want != nil && tt.tx.inserted != nil {
				t.Fatal("a refused rotation stored a token")
			}
		})
	}
}
