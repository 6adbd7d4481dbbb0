package kidregistry

import (
	"context"
	"sync"

	"github.com/health-data-connect/hdc/internal/clientkey"
	"github.com/health-data-connect/hdc/internal/contract"
	"github.com/health-data-connect/hdc/kid-registry/planeclient"
)

// PlaneConfig configures the client of the backend's key plane
// (planeclient.Config).
type PlaneConfig = planeclient.Config

// FollowPlane returns the keys of the backend's key plane that c
// describes, looked up by kid on first use and followed by its change
// feed once Run is called.
func FollowPlane(c PlaneConfig) (*Keys, error) {
	src, err := planeclient.New(c)
	if err != nil {
		return nil, err
	}
	return newKeys(planeSource{src}), nil
}

// planeSource is the backend's key plane.
type planeSource struct {
	source *planeclient.Source
}

func (p planeSource) lookup(ctx context.Context, kid, from string) (*clientkey.Key, error) {
	return p.source.Lookup(ctx, kid, from)
}

func (p planeSource) known(kid string) bool { return p.source.Cached(kid) }

func (p planeSource) refused(from string) error { return p.source.Refused(from) }

func (p planeSource) keys() []clientkey.Key { return p.source.Keys() }

func (p planeSource) reload() (bool, int, error) {
	p.source.Forget()
	return true, 0, nil
}

// run follows the feed and reports used, until ctx is done.
func (p planeSource) run(ctx context.Context, used planeclient.Uses) {
	var reporting sync.WaitGroup
	reporting.Go(func() { p.source.Report(ctx, used) })
	p.source.Run(ctx)
	reporting.Wait()
}

func (p planeSource) close() error { return nil }

func (p planeSource) clientLimits(client string) (contract.Limits, bool) {
	return p.source.ClientLimits(client)
}
