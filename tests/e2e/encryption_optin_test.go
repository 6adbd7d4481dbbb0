package e2e

import (
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/health-data-connect/hdc/internal/testkit"
	"github.com/health-data-connect/hdc/tests/hdctest"
)

// TestEncryptionOptInAsDocumented holds what the documents say of the
// X-Encryption opt-in to what the edge does: each value is sent to the
// edge, and the edge opens the encrypted transport (an answer sealed under
// the client's key, X-Encryption: JWE) exactly when docs/openapi.yaml's
// parameter Encryption accepts the value; otherwise it answers 400
// invalid_encryption_header. The sentences that state the rule
// (errors.md's row, api.md's, the document's catalogue and parameter) say
// "in any case" exactly when the edge takes JWE in another case.
func TestEncryptionOptInAsDocumented(t *testing.T) {
	t.Parallel()
	s := hdctest.StartStack(t)
	c := s.NewClient("clinic-optin-docs")
	tk := s.Login(c, false, "")
	id := s.Upload(c, tk, false, []byte("a consultation"), "")
	doc := apiDocument(t)
	anyCase := false
	for _, value := range []string{"JWE", "jwe", "Jwe", "jWe", "JWe", "JWE, JWE", "JWE;v=1", "JWEJWE", "J WE", "JW", "x", ""} {
		t.Run(value, func(t *testing.T) {
			documented := doc.Validate("/components/parameters/Encryption/schema", value) == nil
			req, _ := http.NewRequest("GET", s.Edge+"/health/api/v1/fhir/retrieve?identifier="+id, nil)
			req.Header.Set("Authorization", "Bearer "+tk.AccessToken)
			req.Header.Set(hdctest.JWEKidHeader, c.Kid)
			req.Header.Set(hdctest.JWEHeader, value)
			resp, err := s.HTTP.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			accepted := resp.StatusCode == http.StatusOK && resp.Header.Get(hdctest.JWEHeader) == "JWE" &&
				!strings.Contains(string(body), "Bundle")
			if accepted && value != "JWE" {
				anyCase = true
			}
			switch {
			case accepted && !documented:
				t.Errorf("X-Encryption: %q, which %s refuses, opens the encrypted transport at the edge", value, hdctest.APIDocPath)
			case !accepted && documented:
				t.Errorf("X-Encryption: %q, which %s accepts, is answered %d %s", value, hdctest.APIDocPath, resp.StatusCode, body)
			case !accepted:
				testkit.WantProblem(t, resp.StatusCode, resp.Header, body, http.StatusBadRequest, "invalid_encryption_header")
			}
		})
	}
	for where, text := range encryptionRuleSentences(t, doc) {
		if strings.Contains(text, "in any case") != anyCase {
			t.Errorf("%s: %q, but the edge takes JWE in any case: %v", where, text, anyCase)
		}
	}
}

// encryptionRuleSentences are the places the documents state which
// X-Encryption the edge takes, by where they are.
func encryptionRuleSentences(t *testing.T, doc *hdctest.APIDoc) map[string]string {
	t.Helper()
	errorsMD, err := os.ReadFile(filepath.Join(hdctest.RepoRoot, "docs", "errors.md"))
	if err != nil {
		t.Fatal(err)
	}
	var row string
	for _, l := range strings.Split(string(errorsMD), "\n") {
		if strings.Contains(l, "| `invalid_encryption_header` |") {
			row = l
		}
	}
	_, asking, _ := strings.Cut(apiSection(t, "## The encrypted transport"), "**Asking.**")
	asking, _, _ = strings.Cut(asking, "\n- ")
	param, _ := doc.At("/components/parameters/Encryption/description").(string)
	var catalogue string
	entries, _ := doc.At("/components/schemas/ProblemCatalogue/oneOf").([]any)
	for _, e := range entries {
		if e, _ := e.(map[string]any); e["title"] == "invalid_encryption_header" {
			catalogue, _ = e["description"].(string)
		}
	}
	return map[string]string{
		"docs/errors.md's invalid_encryption_header": row,
		"docs/api.md's **Asking.**":                  asking,
		"docs/openapi.yaml's parameter Encryption":   param,
		"docs/openapi.yaml's ProblemCatalogue":       catalogue,
	}
}
