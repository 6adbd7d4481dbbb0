package admin

import (
	"context"
	"net/http"
	"sync"
	"time"

	"github.com/health-data-connect/hdc/backend/admin/adminapi"
	"github.com/health-data-connect/hdc/backend/audit"
	"github.com/health-data-connect/hdc/backend/store"
)

// SeenInterval is how often a backend writes a certificate's last use
// (store.People): its first request, then its first after an interval;
// the requests between write nothing, so that the Admin API's requests
// cost no write each, and the list of people is as fresh as the interval.
const SeenInterval = time.Minute

// maxSightings bounds the certificates a backend remembers writing; past
// it, it forgets them all and writes each again once.
const maxSightings = 10000

// sightings records the people a backend serves, each certificate at most
// once per SeenInterval from this backend (the store skips a write within
// the interval of another backend's too). It is safe for concurrent use.
type sightings struct {
	st  store.People
	now func() time.Time

	mu      sync.Mutex
	written map[string]time.Time // by serial: when this backend last wrote it
}

func newSightings(st store.People, now func() time.Time) *sightings {
	return &sightings{st: st, now: now, written: map[string]time.Time{}}
}

// see records that the backend serves p now, unless it wrote p's
// certificate within the interval. A write that fails is tried again at
// the certificate's next request.
func (s *sightings) see(ctx context.Context, p audit.Person) error {
	now := s.now()
	if !s.due(p.Serial, now) {
		return nil
	}
	err := s.st.SeePerson(ctx, store.Person{Serial: p.Serial, Name: p.Name, Role: string(p.Role), FirstSeen: now, LastSeen: now},
		now.Add(-SeenInterval))
	if err != nil {
		s.mu.Lock()
		if s.written[p.Serial].Equal(now) {
			delete(s.written, p.Serial)
		}
		s.mu.Unlock()
	}
	return err
}

// due reports whether serial's use at now is to be written, and marks it
// written then.
func (s *sightings) due(serial string, now time.Time) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if last, ok := s.written[serial]; ok && !now.Before(last) && now.Sub(last) < SeenInterval {
		return false
	}
	if len(s.written) >= maxSightings {
		clear(s.written)
	}
	s.written[serial] = now
	return true
}

// personSeenOut is p as the API lists it, revoked when its serial is on
// the deny-list.
func personSeenOut(p store.Person, revoked map[string]bool) adminapi.PersonSeen {
	return adminapi.PersonSeen{Name: p.Name, Role: p.Role, Serial: p.Serial, FirstSeen: p.FirstSeen, LastSeen: p.LastSeen,
		Revoked: revoked[p.Serial]}
}

// ListPeople returns a page of the certificates that used the Admin API,
// by name then serial: the name, role and serial each names, when a
// backend first and last served it, and whether it is revoked.
func (s *Service) ListPeople(ctx context.Context, q adminapi.PageQuery) (adminapi.Page[adminapi.PersonSeen], error) {
	people, err := s.st.People(ctx)
	if err != nil {
		return adminapi.Page[adminapi.PersonSeen]{}, err
	}
	list, err := s.st.RevokedCertificates(ctx)
	if err != nil {
		return adminapi.Page[adminapi.PersonSeen]{}, err
	}
	revoked := make(map[string]bool, len(list))
	for _, c := range list {
		revoked[c.Serial] = true
	}
	out := mapped(people, func(p store.Person) adminapi.PersonSeen { return personSeenOut(p, revoked) })
	// A name holds no NUL (contract.ValidPersonName): the key orders as
	// the store does, by name then serial.
	return pageOf(out, func(p adminapi.PersonSeen) string { return p.Name + "\x00" + p.Serial }, q)
}

func (h *Handler) listPeople(w http.ResponseWriter, r *http.Request) error {
	return listed(w, r, h.svc.ListPeople)
}
