package admin

import (
	"net/http"

	"github.com/health-data-connect/hdc/backend/audit"
	"github.com/health-data-connect/hdc/backend/internal/web"
)

// idempotent serves next once per Idempotency-Key of the person calling
// (web.Idempotent): a change sent with a key is made once per person.
func (h *Handler) idempotent(next http.Handler) http.Handler {
	return web.Idempotent{Store: h.Idempotency, Problems: h.problems, Owner: func(r *http.Request) string {
		by, _ := audit.PersonFrom(r.Context()) // requirePerson put it there
		return by.Name
	}}.Wrap(next)
}
