package console

import (
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/health-data-connect/hdc/backend/admin/adminapi"
	"github.com/health-data-connect/hdc/internal/contract"
)

// classLimit is a route class's rate as a client's page shows it: Set
// when the client overrides the edges' default.
type classLimit struct {
	Class contract.RouteClass
	Rate  contract.Rate
	Set   bool
}

// Text says the rate as the page reads it.
func (c classLimit) Text() string {
	switch {
	case !c.Set:
		return "the edges' default"
	case c.Rate == contract.Rate{}:
		return "no limit"
	}
	return fmt.Sprintf("%g a second, burst %d", c.Rate.PerSecond, c.Rate.Burst)
}

// classLimits are l's rates by class, in the documents' order, each
// class whether l overrides it or not.
func classLimits(l contract.Limits) []classLimit {
	out := make([]classLimit, 0, len(contract.RouteClasses))
	for _, class := range contract.RouteClasses {
		rate, ok := l.Rates[class]
		out = append(out, classLimit{Class: class, Rate: rate, Set: ok})
	}
	return out
}

// limitsForm reads the form of a client's limits: each class's
// rate_CLASS_per_second and rate_CLASS_burst (both empty: the edges'
// default; 0 and 0: no limit) and upload_bytes_per_day (empty or 0: the
// default). The API checks the values.
func limitsForm(r *http.Request) (contract.Limits, error) {
	var l contract.Limits
	for _, class := range contract.RouteClasses {
		ps := strings.TrimSpace(r.PostFormValue("rate_" + string(class) + "_per_second"))
		burst := strings.TrimSpace(r.PostFormValue("rate_" + string(class) + "_burst"))
		if ps == "" && burst == "" {
			continue
		}
		var rate contract.Rate
		var errs [2]error
		rate.PerSecond, errs[0] = strconv.ParseFloat(ps, 64)
		rate.Burst, errs[1] = strconv.Atoi(burst)
		if errs[0] != nil || errs[1] != nil {
			return l, invalid("The " + string(class) + " rate is a number a second and a whole burst (0 and 0: no limit; both empty: the edges' default).")
		}
		if l.Rates == nil {
			l.Rates = map[contract.RouteClass]contract.Rate{}
		}
		l.Rates[class] = rate
	}
	if q := strings.TrimSpace(r.PostFormValue("upload_bytes_per_day")); q != "" {
		n, err := strconv.ParseInt(q, 10, 64)
		if err != nil {
			return l, invalid("The daily upload quota is a whole number of bytes (empty or 0: the edges' default).")
		}
		l.UploadBytesPerDay = n
	}
	return l, nil
}

// setLimits makes the form's limits the client's overrides, in place of
// any it had, and goes back to its page.
func (s *Server) setLimits(r *http.Request) (view, error) {
	l, err := limitsForm(r)
	if err != nil {
		return view{}, err
	}
	id := r.PathValue("id")
	if _, err := s.api.SetClientLimits(r.Context(), id, l); err != nil {
		return view{}, err
	}
	return view{Redirect: "/clients/" + url.PathEscape(id)}, nil
}

// clearLimits removes the client's overrides, and goes back to its page.
func (s *Server) clearLimits(r *http.Request) (view, error) {
	id := r.PathValue("id")
	if _, err := s.api.ClearClientLimits(r.Context(), id); err != nil {
		return view{}, err
	}
	return view{Redirect: "/clients/" + url.PathEscape(id)}, nil
}

// confirmClearLimits asks the operator to confirm that the client's
// overrides go, naming each.
func (s *Server) confirmClearLimits(r *http.Request, c adminapi.Client) (view, error) {
	l, err := s.api.ClientLimits(r.Context(), c.ClientID)
	if err != nil {
		return view{}, err
	}
	facts := []fact{{"Client", c.DisplayName()}}
	for _, cl := range classLimits(l.Limits) {
		if cl.Set {
			facts = append(facts, fact{string(cl.Class), cl.Text()})
		}
	}
	if l.Limits.UploadBytesPerDay > 0 {
		facts = append(facts, fact{"Daily upload quota", strconv.FormatInt(l.Limits.UploadBytesPerDay, 10) + " bytes"})
	}
	if len(facts) == 1 {
		return view{}, invalid("The client has no override to clear: the edges' defaults apply to it.")
	}
	id := url.PathEscape(c.ClientID)
	return confirmRevoke("clear the limits", "clients", revokeView{Facts: facts,
		Consequence: "Clearing removes these overrides: every edge applies its default limits to the client within a second.",
		Action:      "/clients/" + id + "/limits/clear", Button: "Clear the limits", Cancel: "/clients/" + id}), nil
}
