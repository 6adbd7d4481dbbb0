package admin

import (
	"net/http"
	"slices"
	"strings"

	"go.uber.org/zap"

	"github.com/health-data-connect/hdc/backend/admin/adminapi"
	"github.com/health-data-connect/hdc/backend/audit"
	"github.com/health-data-connect/hdc/backend/internal/web"
	"github.com/health-data-connect/hdc/internal/contract"
	"github.com/health-data-connect/hdc/internal/problem"
	"github.com/health-data-connect/hdc/internal/telemetry"
)

// The refusals of requirePerson.
var (
	errNoHop = problem.New(http.StatusForbidden, problem.CodeForbidden,
		"the Admin API needs the hop's mutual TLS (HDC_HOP_CA, HDC_HOP_CERT, HDC_HOP_KEY) and a person's certificate")
	errNoPerson = problem.New(http.StatusForbidden, problem.CodeForbidden,
		"this route needs a client certificate of the hop's authority that names a person, of the role operator or auditor")
	errNotOperator = problem.New(http.StatusForbidden, problem.CodeForbidden,
		"this route changes the gateway: it needs an operator's certificate")
)

// PersonOf returns the person the client certificate of r names: a
// certificate of the hop's authority (the handshake verified it), of a
// person's role, whose common name is a person's name. ok is false for any
// other request.
func PersonOf(r *http.Request) (p audit.Person, ok bool) {
	i := slices.IndexFunc(adminapi.Readers, func(role contract.Role) bool { return contract.HasRole(r.TLS, role) })
	if i < 0 {
		return audit.Person{}, false
	}
	cert := r.TLS.VerifiedChains[0][0]
	p = audit.Person{Name: cert.Subject.CommonName, Serial: cert.SerialNumber.Text(16), Role: adminapi.Readers[i]}
	return p, contract.ValidPersonName(p.Name) && cert.SerialNumber.Sign() > 0 && !strings.HasPrefix(p.Serial, "-")
}

// requirePerson serves next to a person of one of roles, with the person
// in the request's context (audit.WithPerson), and refuses anyone else
// with 403, logging the refusal without the certificate. Every person's
// certificate it sees, of whatever role, is recorded among the people
// (ListPeople), at most once a SeenInterval from this backend.
func (h *Handler) requirePerson(roles []contract.Role, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p, ok := PersonOf(r)
		if ok && h.HopTLS {
			h.see(r, p)
		}
		refusal := errNoPerson
		switch {
		case !h.HopTLS:
			refusal = errNoHop
		case ok && slices.Contains(roles, p.Role):
			next.ServeHTTP(w, r.WithContext(audit.WithPerson(r.Context(), p)))
			return
		case ok:
			refusal = errNotOperator
		}
		telemetry.Logger(r.Context(), h.Log).Warn("admin request refused",
			zap.String("method", contract.Method(r.Method)), zap.String("route", h.mux.Pattern(r)),
			zap.String("person", p.Name), zap.String("role", string(p.Role)), zap.String("source", web.SourceAddr(r)))
		problem.Write(w, refusal)
	})
}

// see records that p made the request r. A failed write is logged and
// does not refuse the request: the list of people is the operators'
// view, not an access check, and the next request writes again.
func (h *Handler) see(r *http.Request, p audit.Person) {
	if err := h.svc.people.see(r.Context(), p); err != nil {
		telemetry.Logger(r.Context(), h.Log).Warn("recording a person's use of the Admin API failed", zap.String("person", p.Name), zap.Error(err))
	}
}
