package keyplane

import (
	"context"
	"net/http"

	"github.com/health-data-connect/hdc/backend/internal/web"
	"github.com/health-data-connect/hdc/backend/store"
	"github.com/health-data-connect/hdc/internal/kidfilter"
)

// filterPage is how many kids the filter's build reads at once
// (Handler.filterPage, which tests make smaller).
const filterPage = 10_000

// serveFilter answers a filter of every kid there is, built from the
// changes from the first on (each kid once, with its last change), and
// the newest change number it covers: an edge follows the changes after
// it.
func (h *Handler) serveFilter(w http.ResponseWriter, r *http.Request) error {
	kids, last, err := allKids(r.Context(), h.store, h.filterPage)
	if err != nil {
		return err
	}
	f := kidfilter.New(len(kids))
	for _, kid := range kids {
		f.Add(kid)
	}
	wire, err := f.Wire(last)
	if err != nil {
		return err
	}
	web.WriteJSON(w, http.StatusOK, wire)
	return nil
}

// allKids returns every kid changed so far, read page kids at a time, and
// the newest change number read. A kid changed while the pages are read comes again later, with
// its new number; the newest number covers every kid returned.
func allKids(ctx context.Context, s store.ClientKeys, page int) ([]string, int64, error) {
	var (
		kids  []string
		after int64
	)
	for {
		cs, last, err := s.ClientKeyChanges(ctx, after, page)
		if err != nil {
			return nil, 0, err
		}
		for _, c := range cs {
			if c.Kid != "" { // not a client's limits
				kids = append(kids, c.Kid)
			}
		}
		if len(cs) < page {
			return kids, max(last, after), nil
		}
		after = cs[len(cs)-1].Seq
	}
}
