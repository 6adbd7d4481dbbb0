package e2e

import (
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/health-data-connect/hdc/tests/hdctest"
)

// TestKeyFailuresOneAnswerRationedOrNot (fourth review, finding 5): once
// an address had spent its look-up ration, a kid that exists but was not
// cached answered 503 key_lookups_busy while a kid the filter rules out
// answered 400 invalid_encryption (30 existing uncached kids: 22 × 400, 8 ×
// 503; 30 random kids: 30 × 400), which told guessed kids from the others.
// Now an address gets one answer for every kid the edge would refuse,
// existing or not, cached or not: 400 invalid_encryption, byte for byte,
// while it has rations, and 503 key_lookups_busy with Retry-After once it
// has spent them.
func TestKeyFailuresOneAnswerRationedOrNot(t *testing.T) {
	t.Parallel()
	const burst = 20
	s := hdctest.StartStackEnv(t, nil, []string{"HDC_KEY_SOURCE_LOOKUP_RATE=0.0001", fmt.Sprint("HDC_KEY_SOURCE_LOOKUP_BURST=", burst)})
	owner := s.NewClient("probe-owner")
	var existing []string
	for range 31 {
		var k struct{ Kid string }
		s.HDC(&k, "keys", "add", "--client", owner.ID)
		existing = append(existing, k.Kid)
	}
	s.WaitForKey(existing[len(existing)-1]) // the filter holds every one
	// The owner's own kid is cached once the owner has used it, from
	// another address.
	if status, _ := (&prober{t: t, client: hdctest.FromAddr("127.0.0.2"), base: s.Edge}).login(owner.Kid); status != http.StatusBadRequest {
		t.Fatalf("a login under the owner's kid with a wrong key: %d", status)
	}
	cached, random := owner.Kid, func() string { return "k_" + randomKid() }
	p := &prober{t: t, client: hdctest.FromAddr("127.0.0.7"), base: s.Edge}

	// With rations left: one answer for all three, byte for byte.
	before := answers{}
	for _, kid := range []string{existing[0], random(), cached} {
		before.add(p.login(kid))
	}
	if len(before) != 1 || before[`400 invalid_encryption`] != 3 {
		t.Fatalf("before the ration is spent: %v, want one answer, 400 invalid_encryption, for every kid", before)
	}
	for range burst - 3 {
		p.login(random())
	}

	// The review's probe, once the ration is spent.
	groups := map[string]answers{"existing": {}, "random": {}, "cached": {}}
	for _, kid := range existing[1:] {
		groups["existing"].add(p.login(kid))
		groups["random"].add(p.login(random()))
		groups["cached"].add(p.login(cached))
	}
	t.Logf("after the ration: %v", groups)
	for name, got := range groups {
		if len(got) != 1 || got[`503 key_lookups_busy Retry-After`] != len(existing)-1 {
			t.Fatalf("%s kids got %v; want every one 503 key_lookups_busy with Retry-After, as every other kind", name, got)
		}
	}
}

// answers counts answers by status, code and Retry-After.
type answers map[string]int

func (a answers) add(status int, answer string) { a[fmt.Sprint(status, " ", answer)]++ }

// prober sends the public login route envelopes that no key opens, from
// client to the edge at base.
type prober struct {
	t      *testing.T
	client *http.Client
	base   string
	bodies map[string]string // an answer's body by code: each code's is one
}

// login sends an envelope under kid and returns the answer's status and
// its problem's code (with "Retry-After" when the answer has one),
// checking that every answer of one code is the same bytes.
func (p *prober) login(kid string) (int, string) {
	p.t.Helper()
	junk := make([]byte, 48)
	_, _ = rand.Read(junk)
	b64 := base64.RawURLEncoding.EncodeToString
	protected := b64([]byte(`{"alg":"dir","enc":"A128CBC-HS256","kid":"` + kid + `"}`))
	body := fmt.Sprintf(`{"protected":%q,"iv":%q,"ciphertext":%q,"tag":%q}`, protected, b64(junk[:16]), b64(junk[16:32]), b64(junk[32:]))
	req, err := http.NewRequest("POST", p.base+hdctest.LoginPath, strings.NewReader(body))
	if err != nil {
		p.t.Fatal(err)
	}
	req.Header.Set("Content-Type", hdctest.JSONType)
	req.Header.Set(hdctest.JWEHeader, "JWE")
	resp, err := p.client.Do(req)
	if err != nil {
		p.t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	var prob struct{ Code string }
	if err := json.Unmarshal(b, &prob); err != nil || prob.Code == "" {
		p.t.Fatalf("under kid %s: %d %s, not a problem", kid, resp.StatusCode, b)
	}
	if p.bodies == nil {
		p.bodies = map[string]string{}
	}
	if prev, ok := p.bodies[prob.Code]; ok && prev != string(b) {
		p.t.Fatalf("two answers of code %s differ:\n%s\n%s", prob.Code, prev, b)
	}
	p.bodies[prob.Code] = string(b)
	if resp.Header.Get("Retry-After") != "" {
		return resp.StatusCode, prob.Code + " Retry-After"
	}
	return resp.StatusCode, prob.Code
}

// randomKid returns a kid nobody made.
func randomKid() string {
	b := make([]byte, 10)
	_, _ = rand.Read(b)
	return strings.ToLower(base64.RawURLEncoding.EncodeToString(b))
}
