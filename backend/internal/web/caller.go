package web

import (
	"context"
	"net/http"

	"github.com/health-data-connect/hdc/internal/contract"
	"github.com/health-data-connect/hdc/internal/problem"
)

// Caller is the authenticated client of a request.
type Caller struct {
	ClientID    string
	WorkspaceID string
	// GrantID is the sharing grant that opened WorkspaceID, or empty
	// when the client acts in its own workspace.
	GrantID string
	// SessionID is the login the token was issued for, or empty for a
	// token issued before logins were named.
	SessionID string
}

type callerKey struct{}

// CallerFrom returns the caller RequireCaller stored in ctx.
func CallerFrom(ctx context.Context) (Caller, bool) {
	c, ok := ctx.Value(callerKey{}).(Caller)
	return c, ok
}

// UnknownCaller is the problem for identity headers naming a workspace or
// client that does not exist (any more).
func UnknownCaller() *problem.Problem {
	return problem.New(http.StatusUnauthorized, problem.CodeUnauthenticated, "the token's client or workspace does not exist")
}

// RequireCaller answers 401 unless the request carries exactly one valid
// client id and workspace id header, and at most one valid grant id and
// session id, and otherwise hands next a context holding the Caller.
func RequireCaller(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		client, okClient := single(r.Header, contract.HeaderClientID)
		ws, okWS := single(r.Header, contract.HeaderWorkspaceID)
		grant, okGrant := optional(r.Header, contract.HeaderGrantID)
		session, okSession := optional(r.Header, contract.HeaderSessionID)
		if !okClient || !okWS || !okGrant || !okSession || !contract.ValidID(client) || !contract.ValidID(ws) {
			problem.Write(w, problem.New(http.StatusUnauthorized, problem.CodeUnauthenticated,
				"a valid bearer token is required"))
			return
		}
		c := Caller{ClientID: client, WorkspaceID: ws, GrantID: grant, SessionID: session}
		next.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), callerKey{}, c)))
	})
}

// optional returns the header's value when it is absent, or present once
// with a valid id.
func optional(h http.Header, name string) (string, bool) {
	v := h.Values(name)
	switch {
	case len(v) == 0:
		return "", true
	case len(v) == 1 && contract.ValidID(v[0]):
		return v[0], true
	}
	return "", false
}

// single returns the header's value when it is present exactly once.
func single(h http.Header, name string) (string, bool) {
	v := h.Values(name)
	if len(v) != 1 {
		return "", false
	}
	return v[0], true
}
