package admin

import (
	"context"
	"math/big"
	"net/http"
	"slices"
	"strings"

	"github.com/health-data-connect/hdc/backend/admin/adminapi"
	"github.com/health-data-connect/hdc/backend/audit"
	"github.com/health-data-connect/hdc/backend/internal/web"
	"github.com/health-data-connect/hdc/backend/store"
	"github.com/health-data-connect/hdc/internal/contract"
	"github.com/health-data-connect/hdc/internal/problem"
)

// Serial returns a certificate serial number as the deny-list and the
// audit trail hold it, lower-case hex without leading zeros, from the
// forms tools print: hex in either case, with or without ':' between
// bytes (openssl x509 -serial prints "serial=0A1B…"). ok is false for
// anything else.
func Serial(s string) (string, bool) {
	s = strings.ReplaceAll(strings.TrimPrefix(strings.TrimPrefix(s, "serial="), "0x"), ":", "")
	if s == "" || len(s) > 64 {
		return "", false
	}
	n, ok := new(big.Int).SetString(s, 16)
	if !ok || n.Sign() <= 0 {
		return "", false
	}
	return n.Text(16), len(n.Text(16)) <= 40
}

// RevokeCertificate puts the certificate r.Serial on the deny-list: within
// DenyListTTL every backend refuses it on both listeners, whatever its
// role. A person may not revoke the certificate they call with (they would
// lock themselves out mid-request; another operator can).
func (s *Service) RevokeCertificate(ctx context.Context, r adminapi.Revocation) (adminapi.Revocation, error) {
	by, err := audit.PersonFrom(ctx)
	if err != nil {
		return adminapi.Revocation{}, err
	}
	serial, ok := Serial(r.Serial)
	if !ok {
		return adminapi.Revocation{}, problem.New(400, problem.CodeInvalidRequest, "serial must be a certificate's serial number in hex (as openssl x509 -serial prints it)")
	}
	if r.Name != "" && !contract.ValidPersonName(r.Name) || r.Role != "" && !slices.Contains(contract.Roles, contract.Role(r.Role)) {
		return adminapi.Revocation{}, problem.New(400, problem.CodeInvalidRequest, "name must be a certificate's name (letters, digits, '@', '.', '-', '_', '+') and role one of the hop's roles")
	}
	if serial == by.Serial {
		return adminapi.Revocation{}, problem.New(409, problem.CodeConflict, "this is the certificate of the request: another operator revokes it")
	}
	now := s.now()
	c := store.RevokedCertificate{Serial: serial, Name: r.Name, Role: r.Role, RevokedAt: now, RevokedBy: by.Name}
	e := audit.Event{At: now, Action: audit.CertificateRevoke, Outcome: audit.Success,
		Entity: audit.Entity{Kind: audit.EntityCertificate, ID: serial}, Person: by}
	if err := s.st.RevokeCertificate(ctx, c, e); err != nil {
		return adminapi.Revocation{}, err
	}
	return s.revocation(ctx, serial)
}

// revocation returns the deny-list's entry of serial.
func (s *Service) revocation(ctx context.Context, serial string) (adminapi.Revocation, error) {
	list, err := s.st.RevokedCertificates(ctx)
	if err != nil {
		return adminapi.Revocation{}, err
	}
	i := slices.IndexFunc(list, func(c store.RevokedCertificate) bool { return c.Serial == serial })
	if i < 0 {
		return adminapi.Revocation{}, store.ErrNotFound
	}
	return revocationOut(list[i]), nil
}

// revocationOut is c as the API shows it.
func revocationOut(c store.RevokedCertificate) adminapi.Revocation {
	return adminapi.Revocation{Serial: c.Serial, Name: c.Name, Role: c.Role, RevokedAt: c.RevokedAt, RevokedBy: c.RevokedBy}
}

// ListRevocations returns a page of the deny-list, in serial order.
func (s *Service) ListRevocations(ctx context.Context, q adminapi.PageQuery) (adminapi.Page[adminapi.Revocation], error) {
	list, err := s.st.RevokedCertificates(ctx)
	if err != nil {
		return adminapi.Page[adminapi.Revocation]{}, err
	}
	return pageOf(mapped(list, revocationOut), func(r adminapi.Revocation) string { return r.Serial }, q)
}

func (h *Handler) listRevocations(w http.ResponseWriter, r *http.Request) error {
	return listed(w, r, h.svc.ListRevocations)
}

func (h *Handler) revoke(w http.ResponseWriter, r *http.Request) error {
	var body adminapi.Revocation
	if p := web.DecodeRequest(w, r, &body); p != nil {
		return p
	}
	if !body.RevokedAt.IsZero() || body.RevokedBy != "" {
		return problem.New(http.StatusBadRequest, problem.CodeInvalidRequest, "revoked_at and revoked_by are the server's to say")
	}
	rev, err := h.svc.RevokeCertificate(r.Context(), body)
	if err != nil {
		return err
	}
	if h.DenyList != nil {
		h.DenyList.Forget()
	}
	web.WriteJSON(w, http.StatusCreated, rev)
	return nil
}
