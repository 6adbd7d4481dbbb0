package storetest

import (
	"reflect"
	"testing"

	"github.com/health-data-connect/hdc/backend/audit"
	"github.com/health-data-connect/hdc/backend/store"
	"github.com/health-data-connect/hdc/internal/contract"
)

// testClientLimits: a client's limits are set, read back, listed in the
// order of client ids without the cleared ones, and each change is a
// change of the key plane naming the client and a record of the trail;
// an unknown client is not found, and a change whose record cannot be
// written is not made.
func testClientLimits(t *testing.T, s Store) {
	seed(t, s, "w1", "c1")
	seed(t, s, "w1", "c2")
	writes := contract.Limits{Rates: map[contract.RouteClass]contract.Rate{contract.ClassWrites: {PerSecond: 100, Burst: 20}}}
	quota := contract.Limits{UploadBytesPerDay: 10 << 20}
	set := func(client string, l contract.Limits) error {
		return s.SetClientLimits(ctx(t), client, l, operator(audit.ClientLimitsSet, "w1"))
	}
	_, before, err := s.ClientKeyChanges(ctx(t), 0, 100)
	must(t, err)
	wantErr(t, set("nobody", writes), store.ErrNotFound)
	wantAppendFailed(t, s.SetClientLimits(ctx(t), "c1", writes, unrecordable(operator(audit.ClientLimitsSet, "w1"))))
	if _, ok, err := s.ClientLimits(ctx(t), "c1"); ok || err != nil {
		t.Fatalf("limits set by a change whose record failed: %v", err)
	}
	must(t, set("c2", quota))
	must(t, set("c1", writes))
	got, ok, err := s.ClientLimits(ctx(t), "c1")
	if err != nil || !ok || !reflect.DeepEqual(got, writes) {
		t.Fatalf("c1's limits: %+v, %v, %v", got, ok, err)
	}
	list, err := s.ListClientLimits(ctx(t), "", 10)
	must(t, err)
	if len(list) != 2 || list[0].ClientID != "c1" || list[1].ClientID != "c2" || list[1].Limits.UploadBytesPerDay != 10<<20 {
		t.Fatalf("listed %+v", list)
	}
	if page, err := s.ListClientLimits(ctx(t), "c1", 10); err != nil || len(page) != 1 || page[0].ClientID != "c2" {
		t.Fatalf("the page after c1: %+v, %v", page, err)
	}
	must(t, set("c2", contract.Limits{}))
	if _, ok, err := s.ClientLimits(ctx(t), "c2"); ok || err != nil {
		t.Fatalf("c2's cleared limits are still there: %v", err)
	}
	if list, _ := s.ListClientLimits(ctx(t), "", 10); len(list) != 1 {
		t.Fatalf("listed %+v after c2's were cleared", list)
	}
	changes, last, err := s.ClientKeyChanges(ctx(t), before, 100)
	must(t, err)
	var named []string
	for _, c := range changes {
		if c.Kid != "" || c.Seq <= before || c.Seq > last {
			t.Fatalf("a change of limits: %+v (last %d)", c, last)
		}
		named = append(named, c.Client)
	}
	// c2's two changes are one row: the feed names it once, at its last.
	if !reflect.DeepEqual(named, []string{"c1", "c2"}) {
		t.Fatalf("the feed names %q", named)
	}
	wantTrail(t, s, "w1", 2, audit.ClientLimitsSet, audit.ClientLimitsSet, audit.ClientLimitsSet)
}
