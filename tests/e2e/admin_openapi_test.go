package e2e

import (
	"slices"
	"strings"
	"testing"

	"github.com/health-data-connect/hdc/backend/admin/adminapi"
	"github.com/health-data-connect/hdc/internal/contract"
	"github.com/health-data-connect/hdc/tests/hdctest"
)

// TestAdminOpenAPIMatchesRoutes: docs/admin-openapi.yaml describes the
// Admin API's route table, no more and no less: every route is an
// operation, whose x-hdc-roles are the roles the server lets through and
// which takes an Idempotency-Key exactly when the server keeps one. (The
// answers themselves are checked against the document by the fleet's
// test, tests/scale, which calls every route as every role.)
func TestAdminOpenAPIMatchesRoutes(t *testing.T) {
	t.Parallel()
	doc, err := hdctest.AdminOpenAPI()
	if err != nil {
		t.Fatal(err)
	}
	listed := map[string]bool{}
	paths, _ := doc.Root["paths"].(map[string]any)
	for p, item := range paths {
		for method := range item.(map[string]any) {
			listed[strings.ToUpper(method)+" "+adminapi.Prefix+p] = true
		}
	}
	for _, rt := range adminapi.Routes() {
		key := rt.Method + " " + rt.Path
		t.Run(key, func(t *testing.T) {
			if !listed[key] {
				t.Fatal("the route is not in the document")
			}
			delete(listed, key)
			op := "/paths/" + hdctest.EscapePointer(strings.TrimPrefix(rt.Path, adminapi.Prefix)) + "/" + strings.ToLower(rt.Method)
			var roles []contract.Role
			for _, r := range asSlice(doc.At(op + "/x-hdc-roles")) {
				roles = append(roles, contract.Role(r.(string)))
			}
			if !slices.Equal(roles, rt.Roles) {
				t.Errorf("x-hdc-roles %v, the server's %v", roles, rt.Roles)
			}
			idempotent := slices.ContainsFunc(asSlice(doc.At(op+"/parameters")), func(p any) bool {
				ref, _ := p.(map[string]any)["$ref"].(string)
				return ref == "#/components/parameters/IdempotencyKey"
			})
			if idempotent != rt.Idempotent {
				t.Errorf("takes an Idempotency-Key in the document: %v; on the server: %v", idempotent, rt.Idempotent)
			}
		})
	}
	for key := range listed {
		t.Errorf("%s is in the document, not on the server", key)
	}
}

// asSlice returns v as a slice, nil when it is not one.
func asSlice(v any) []any {
	s, _ := v.([]any)
	return s
}
