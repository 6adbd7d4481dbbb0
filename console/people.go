package console

import (
	"context"
	"net/http"

	"github.com/health-data-connect/hdc/backend/admin/adminapi"
)

// peopleRoutes are the people's page, and the revocation of a
// certificate.
func (s *Server) peopleRoutes(page func(string, pageFunc) route, change func(string, changeFunc) route) []route {
	return []route{
		page("GET /people", s.peoplePage),
		page("GET /people/confirm", s.confirmRevocationPage),
		change("POST /revocations", s.revokeCertificate),
	}
}

// peopleView is the people's page: every certificate that used the Admin
// API, and the deny-list.
type peopleView struct {
	People      []adminapi.PersonSeen
	Revocations []adminapi.Revocation
}

// peoplePage lists the people who used the Admin API (GET
// /admin/v1/people), each with a revocation of their certificate, and the
// revoked certificates (GET /admin/v1/revocations).
func (s *Server) peoplePage(r *http.Request) (view, error) {
	ctx := r.Context()
	people, err := adminapi.All(ctx, func(ctx context.Context, cursor string) (adminapi.Page[adminapi.PersonSeen], error) {
		return s.api.ListPeople(ctx, adminapi.PageQuery{Cursor: cursor, Limit: adminapi.MaxLimit})
	})
	if err != nil {
		return view{}, err
	}
	revoked, err := adminapi.All(ctx, func(ctx context.Context, cursor string) (adminapi.Page[adminapi.Revocation], error) {
		return s.api.ListRevocations(ctx, adminapi.PageQuery{Cursor: cursor, Limit: adminapi.MaxLimit})
	})
	if err != nil {
		return view{}, err
	}
	return view{Template: "people", Title: "People", Nav: "people", Data: peopleView{People: people, Revocations: revoked}}, nil
}

// confirmRevocationPage asks the operator to confirm the revocation of
// the certificate the query's serial names, with its name and role as
// the people's list shows them (the form's, for one the list does not
// hold).
func (s *Server) confirmRevocationPage(r *http.Request) (view, error) {
	q := r.URL.Query()
	serial := q.Get("serial")
	if serial == "" {
		return view{}, invalid("Name the certificate's serial, as openssl x509 -noout -serial prints it.")
	}
	name, role := q.Get("name"), q.Get("role")
	facts := []fact{{"Serial", serial}}
	if name != "" {
		facts = append(facts, fact{"Name", name})
	}
	if role != "" {
		facts = append(facts, fact{"Role", role})
	}
	return confirmRevoke("revoke a certificate", "people", revokeView{Facts: facts,
		Consequence: "Every backend refuses this certificate on both listeners within 2 seconds, whatever its role, until it expires: " +
			"its holder can no longer use the Admin API or the console. Nothing undoes it; issue a new certificate instead.",
		Action: "/revocations", Button: "Revoke the certificate", Cancel: "/people",
		Fields: []fact{{"serial", serial}, {"name", name}, {"role", role}}}), nil
}

// revokeCertificate puts the certificate of the form's serial on the
// deny-list, labelled with its name and role, and goes back to the
// people. The API refuses a person's own certificate.
func (s *Server) revokeCertificate(r *http.Request) (view, error) {
	rev := adminapi.Revocation{Serial: r.PostFormValue("serial"), Name: r.PostFormValue("name"), Role: r.PostFormValue("role")}
	if _, err := s.api.RevokeCertificate(r.Context(), rev); err != nil {
		return view{}, err
	}
	return view{Redirect: "/people"}, nil
}
