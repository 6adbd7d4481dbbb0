package admin

import (
	"context"
	"net/http"
	"time"

	"github.com/google/uuid"

	"github.com/health-data-connect/hdc/backend/audit"
	"github.com/health-data-connect/hdc/backend/store"
	"github.com/health-data-connect/hdc/backend/webhook"
	"github.com/health-data-connect/hdc/internal/contract"
	"github.com/health-data-connect/hdc/internal/problem"
)

// Destination is a private receiver granted to a workspace, as the API
// shows one: what one workspace's webhooks may reach although the SSRF
// guard refuses it to every other.
type Destination struct {
	ID          string `json:"id"`
	WorkspaceID string `json:"workspace_id"`
	// Prefix is the addresses granted, a /32 or /128 for one address.
	Prefix string `json:"prefix"`
	// Port is the port granted, null for every port.
	Port      *int      `json:"port"`
	CreatedAt time.Time `json:"created_at"`
	CreatedBy string    `json:"created_by"`
	// RevokedAt and RevokedBy are null while the grant is in force.
	RevokedAt *time.Time `json:"revoked_at"`
	RevokedBy *string    `json:"revoked_by"`
}

// destinationOut is d as the API shows it.
func destinationOut(d store.WebhookDestination) Destination {
	out := Destination{ID: d.ID, WorkspaceID: d.WorkspaceID, Prefix: d.Prefix.String(), CreatedAt: d.CreatedAt, CreatedBy: d.CreatedBy}
	if d.Port != 0 {
		port := int(d.Port)
		out.Port = &port
	}
	if !d.RevokedAt.IsZero() {
		out.RevokedAt, out.RevokedBy = &d.RevokedAt, &d.RevokedBy
	}
	return out
}

// DestinationRequest is the body of a grant: an address or prefix, and a
// port (absent or null for every port).
type DestinationRequest struct {
	Prefix string `json:"prefix"`
	Port   *int   `json:"port"`
}

// destination checks the request and returns the destination it names.
func (r DestinationRequest) destination() (webhook.Destination, error) {
	port := 0
	if r.Port != nil {
		if port = *r.Port; port == 0 {
			return webhook.Destination{}, problem.New(http.StatusBadRequest, problem.CodeInvalidRequest,
				"port must be 1 to 65535; leave it out for every port")
		}
	}
	d, err := webhook.NewDestination(r.Prefix, port)
	if err != nil {
		return d, problem.New(http.StatusBadRequest, problem.CodeInvalidRequest, err.Error())
	}
	return d, nil
}

// ListDestinations returns a page of the destinations granted to the
// workspace id, in force or revoked, oldest first.
func (s *Service) ListDestinations(ctx context.Context, id string, q PageQuery) (Page[Destination], error) {
	if _, err := s.st.GetWorkspace(ctx, id); err != nil {
		return Page[Destination]{}, err
	}
	list, err := s.st.ListDestinations(ctx, store.DestinationFilter{WorkspaceID: id})
	if err != nil {
		return Page[Destination]{}, err
	}
	out := make([]Destination, 0, len(list))
	for _, d := range list {
		out = append(out, destinationOut(d))
	}
	return pageOf(out, destinationKey, q)
}

// destinationKey orders the destinations as the store lists them: by
// creation time (fixed width, so that strings compare as times), then id.
func destinationKey(d Destination) string {
	return d.CreatedAt.UTC().Format("2006-01-02T15:04:05.000000Z") + "/" + d.ID
}

// GrantDestination grants the workspace id the destination r names: its
// webhooks may reach it from then on, on every backend (a registration
// and a refused delivery read the grants afresh). The audit record names
// the person.
func (s *Service) GrantDestination(ctx context.Context, id string, r DestinationRequest) (Destination, error) {
	by, err := audit.PersonFrom(ctx)
	if err != nil {
		return Destination{}, err
	}
	d, err := r.destination()
	if err != nil {
		return Destination{}, err
	}
	g := store.WebhookDestination{ID: uuid.NewString(), WorkspaceID: id, Prefix: d.Prefix, Port: d.Port,
		CreatedAt: s.now().UTC().Truncate(time.Microsecond), CreatedBy: by.Name}
	if err := s.st.GrantDestination(ctx, g, destinationEvent(audit.DestinationGrant, by, g.CreatedAt, id, g.ID)); err != nil {
		return Destination{}, err
	}
	s.grantsChanged()
	return destinationOut(g), nil
}

// RevokeDestination revokes the workspace id's grant destination (a
// revoked one keeps its first revocation) and returns it as it is now:
// its webhooks no longer reach it, at once on this backend, on every other
// within webhook.GrantsTTL.
func (s *Service) RevokeDestination(ctx context.Context, id, destination string) (Destination, error) {
	by, err := audit.PersonFrom(ctx)
	if err != nil {
		return Destination{}, err
	}
	if !contract.ValidID(id) || !contract.IsUUID(destination) {
		return Destination{}, store.ErrNotFound
	}
	d, err := s.st.RevokeDestination(ctx, id, destination, by.Name, destinationEvent(audit.DestinationRevoke, by, s.now(), id, destination))
	if err != nil {
		return Destination{}, err
	}
	s.grantsChanged()
	return destinationOut(d), nil
}

// grantsChanged tells this backend's copy of the grants, if any, of a
// change made here, which is then in force here at once.
func (s *Service) grantsChanged() {
	if s.grants != nil {
		s.grants.Forget()
	}
}

// destinationEvent is by's record of action on the workspace's grant id.
func destinationEvent(action audit.Action, by audit.Person, at time.Time, workspace, id string) audit.Event {
	return audit.Event{At: at, Action: action, Outcome: audit.Success, Workspace: workspace, Person: by,
		Entity: audit.Entity{Kind: audit.EntityDestination, ID: id}}
}

func (h *Handler) listDestinations(w http.ResponseWriter, r *http.Request) error {
	q, err := ParsePageQuery(r.URL.Query())
	if err != nil {
		return err
	}
	return byID(w, r, func(ctx context.Context, id string) (Page[Destination], error) {
		return h.svc.ListDestinations(ctx, id, q)
	})
}

func (h *Handler) grantDestination(w http.ResponseWriter, r *http.Request) error {
	return keyChange(w, r, r.PathValue("id"), contract.ValidID, h.svc.GrantDestination,
		func(Destination) int { return http.StatusCreated })
}

func (h *Handler) revokeDestination(w http.ResponseWriter, r *http.Request) error {
	return byPath(w, r, "destination_id", contract.IsUUID, func(ctx context.Context, destination string) (Destination, error) {
		return h.svc.RevokeDestination(ctx, r.PathValue("id"), destination)
	})
}
