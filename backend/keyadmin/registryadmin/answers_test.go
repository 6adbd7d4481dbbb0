package registryadmin

import (
	"errors"
	"strings"
	"testing"

	"github.com/health-data-connect/hdc/backend/admin"
	"github.com/health-data-connect/hdc/backend/admin/adminapi"
	"github.com/health-data-connect/hdc/backend/identity"
	"github.com/health-data-connect/hdc/backend/keyadmin"
	"github.com/health-data-connect/hdc/internal/clientkey"
	"github.com/health-data-connect/hdc/internal/jwe"
	"github.com/health-data-connect/hdc/internal/problem"
)

// answer is what an operation answered, without what differs between two
// runs by design (generated kids and secrets, times): the problem's
// status, code and detail, or the answer's shape.
type answer struct {
	status int
	code   string
	detail string
	shape  any
}

// answerOf reduces an operation's answer v and error err to an answer,
// the generated kid named in a problem's detail written "generated".
func answerOf(t *testing.T, v any, err error, generated string) answer {
	t.Helper()
	var p *problem.Problem
	switch {
	case errors.As(err, &p):
		detail := p.Detail
		if generated != "" {
			detail = strings.ReplaceAll(detail, generated, "generated")
		}
		return answer{status: p.Status, code: p.Code, detail: detail}
	case err != nil:
		t.Fatalf("an error that is no problem: %v", err)
	}
	switch v := v.(type) {
	case adminapi.IssuedKey:
		return answer{shape: [3]any{v.ClientID, v.Enc, v.RequireFresh}}
	case adminapi.Rotation:
		return answer{shape: [5]any{v.DryRun, v.ClientID, v.NewKey, len(v.Retiring), v.Key == nil}}
	case adminapi.Retirement:
		return answer{shape: [4]any{v.DryRun, v.Changed, v.Key.Kid, v.Key.Status}}
	case adminapi.KeyInfo:
		return answer{shape: [3]any{v.Enc, v.RequireFresh, v.Status}}
	}
	t.Fatalf("an answer of %T", v)
	return answer{}
}

// TestAnswersAsTheDatabase runs the same operations on a registry file and
// on the database (the Admin API's service, as hdc's direct mode does):
// each answers alike, refusals with the same problem, so that hdc keys
// prints the same either way.
func TestAnswersAsTheDatabase(t *testing.T) {
	t.Parallel()
	st := newStore(t)
	db := admin.New(st, identity.New(st, 1), keyadmin.New(st))
	file, _ := service(t, &trail{Store: newStore(t)})
	ctx := asAlice(t.Context())
	// side is one of the two, with the kid of the key its rotation made.
	type side struct {
		adminapi.Keys
		rotated string
	}
	ops := []struct {
		name string
		op   func(*side) (any, error)
	}{
		{"add", func(k *side) (any, error) {
			return k.AddKey(ctx, client1, adminapi.AddKeyRequest{Kid: "k-one", Secret: "0123456789abcdef"})
		}},
		{"add a kid taken", func(k *side) (any, error) {
			return k.AddKey(ctx, client1, adminapi.AddKeyRequest{Kid: "k-one"})
		}},
		{"add a short secret", func(k *side) (any, error) {
			return k.AddKey(ctx, client1, adminapi.AddKeyRequest{Kid: "k-short", Secret: "short"})
		}},
		{"add a bad kid", func(k *side) (any, error) {
			return k.AddKey(ctx, client1, adminapi.AddKeyRequest{Kid: "k one"})
		}},
		{"add an unknown enc", func(k *side) (any, error) {
			return k.AddKey(ctx, client1, adminapi.AddKeyRequest{Kid: "k-enc", Enc: "A128GCM"})
		}},
		{"rotate, dry run", func(k *side) (any, error) {
			return k.RotateKey(ctx, client1, adminapi.RotateKeyRequest{Enc: jwe.EncA256GCM, DryRun: true})
		}},
		{"rotate to A256GCM", func(k *side) (any, error) {
			rot, err := k.RotateKey(ctx, client1, adminapi.RotateKeyRequest{Enc: jwe.EncA256GCM})
			if err == nil {
				k.rotated = rot.Key.Kid
			}
			return rot, err
		}},
		{"rotate to a stale A256GCM key", func(k *side) (any, error) {
			return k.RotateKey(ctx, client1, adminapi.RotateKeyRequest{RequireFresh: new(bool)})
		}},
		{"rotate to a weaker key", func(k *side) (any, error) {
			return k.RotateKey(ctx, client1, adminapi.RotateKeyRequest{Enc: jwe.EncA128CBCHS256})
		}},
		{"rotate a client without keys", func(k *side) (any, error) {
			return k.RotateKey(ctx, client2, adminapi.RotateKeyRequest{})
		}},
		{"retire, dry run", func(k *side) (any, error) {
			return k.RetireKey(ctx, "k-one", adminapi.RetireKeyRequest{DryRun: true})
		}},
		{"retire", func(k *side) (any, error) {
			return k.RetireKey(ctx, "k-one", adminapi.RetireKeyRequest{})
		}},
		{"retire again", func(k *side) (any, error) {
			return k.RetireKey(ctx, "k-one", adminapi.RetireKeyRequest{})
		}},
		{"list the active keys", func(k *side) (any, error) {
			page, err := k.ListKeys(ctx, adminapi.KeyQuery{Client: client1, Status: clientkey.Active})
			if err != nil || len(page.Items) != 1 || page.Items[0].Kid != k.rotated {
				t.Fatalf("the active keys: %+v, %v; want %s alone", page, err, k.rotated)
			}
			return page.Items[0], nil
		}},
		{"retire the last active key", func(k *side) (any, error) {
			return k.RetireKey(ctx, k.rotated, adminapi.RetireKeyRequest{})
		}},
		{"retire an unknown kid", func(k *side) (any, error) {
			return k.RetireKey(ctx, "nope", adminapi.RetireKeyRequest{})
		}},
		{"get", func(k *side) (any, error) { return k.GetKey(ctx, "k-one") }},
		{"get an unknown kid", func(k *side) (any, error) { return k.GetKey(ctx, "nope") }},
	}
	database, registry := &side{Keys: db}, &side{Keys: file}
	for _, o := range ops {
		t.Run(o.name, func(t *testing.T) {
			fromDB, err := o.op(database)
			want := answerOf(t, fromDB, err, database.rotated)
			fromFile, err := o.op(registry)
			if got := answerOf(t, fromFile, err, registry.rotated); got != want {
				t.Fatalf("the file answered %+v, the database %+v", got, want)
			}
		})
	}
}
