package storetest

import (
	"errors"
	"fmt"
	"reflect"
	"slices"
	"testing"
	"time"

	"github.com/health-data-connect/hdc/backend/audit"
	"github.com/health-data-connect/hdc/backend/store"
	"github.com/health-data-connect/hdc/internal/contract"
)

// named is a client of ws created at d with a name and labels.
func named(id, ws string, d time.Duration, name string, labels map[string]string) store.Client {
	return store.Client{ID: id, WorkspaceID: ws, SecretHash: "h", Status: store.ClientActive, CreatedAt: at(d), Name: name, Labels: labels}
}

func ptr[T any](v T) *T { return &v }

// testClientNames: a client's name and labels are kept as given, read
// with it and listed with it, and changed by UpdateClient, which answers
// the client as it is then; a client without either reads back without.
func testClientNames(t *testing.T, s Store) {
	seed(t, s, "w1", "c0")
	c1 := named("c1", "w1", time.Second, "Klinik Zürich <Süd>", map[string]string{"env": "prod", "example.org/tier": "gold"})
	must(t, s.CreateClient(ctx(t), c1, operator(audit.ClientCreate, "w1")))
	if got, err := s.GetClient(ctx(t), "c1"); err != nil || !reflect.DeepEqual(got, c1) {
		t.Fatalf("GetClient = %+v, %v; want %+v", got, err, c1)
	}
	if got, err := s.GetClient(ctx(t), "c0"); err != nil || got.Name != "" || got.Labels != nil {
		t.Fatalf("a client without a name or labels reads as %+v, %v", got, err)
	}
	list, err := s.ListClients(ctx(t), store.ClientFilter{})
	must(t, err)
	if len(list) != 2 || !reflect.DeepEqual(list[1], c1) {
		t.Fatalf("ListClients = %+v", list)
	}

	u := store.ClientUpdate{Name: ptr("Clinic Seven"), SetLabels: map[string]string{"env": "staging", "region": "eu-1"},
		RemoveLabels: []string{"example.org/tier", "absent"}}
	got, err := s.UpdateClient(ctx(t), "c1", u, operator(audit.ClientUpdate, "w1"))
	want := c1
	want.Name, want.Labels = "Clinic Seven", map[string]string{"env": "staging", "region": "eu-1"}
	if err != nil || !reflect.DeepEqual(got, want) {
		t.Fatalf("UpdateClient = %+v, %v; want %+v", got, err, want)
	}
	if got, err := s.GetClient(ctx(t), "c1"); err != nil || !reflect.DeepEqual(got, want) {
		t.Fatalf("GetClient after the update = %+v, %v; want %+v", got, err, want)
	}
	got, err = s.UpdateClient(ctx(t), "c1", store.ClientUpdate{Name: ptr(""), RemoveLabels: []string{"env", "region"}}, operator(audit.ClientUpdate, "w1"))
	if err != nil || got.Name != "" || got.Labels != nil {
		t.Fatalf("a client whose name and labels were removed: %+v, %v", got, err)
	}
	_, err = s.UpdateClient(ctx(t), "nobody", u, operator(audit.ClientUpdate, "w1"))
	wantErr(t, err, store.ErrNotFound)

	many := map[string]string{}
	for i := range contract.MaxLabels {
		many[fmt.Sprintf("k%d", i)] = "v"
	}
	_, err = s.UpdateClient(ctx(t), "c1", store.ClientUpdate{SetLabels: many}, operator(audit.ClientUpdate, "w1"))
	must(t, err)
	_, err = s.UpdateClient(ctx(t), "c1", store.ClientUpdate{SetLabels: map[string]string{"one": "more"}}, operator(audit.ClientUpdate, "w1"))
	if !errors.Is(err, store.ErrTooManyLabels) {
		t.Fatalf("a label past %d: %v, want ErrTooManyLabels", contract.MaxLabels, err)
	}
	// Replacing one label by another stays within the bound.
	_, err = s.UpdateClient(ctx(t), "c1", store.ClientUpdate{SetLabels: map[string]string{"one": "more"}, RemoveLabels: []string{"k0"}},
		operator(audit.ClientUpdate, "w1"))
	must(t, err)
}

// testClientUpdateAudit: an update appends its record with the changes it
// made, before and after, in its transaction: a record that cannot be
// written undoes the update, and an update that changes nothing appends
// nothing. A change of limits records the limits before and after.
func testClientUpdateAudit(t *testing.T, s Store) {
	seed(t, s, "w1", "c0")
	must(t, s.CreateClient(ctx(t), named("c1", "w1", time.Second, "Clinic 7", map[string]string{"env": "staging"}), operator(audit.ClientCreate, "w1")))
	from := head(t, s, "w1").Last.Seq
	u := store.ClientUpdate{Name: ptr("Clinic Seven"), SetLabels: map[string]string{"env": "prod", "tier": "gold"}}
	_, err := s.UpdateClient(ctx(t), "c1", u, unrecordable(operator(audit.ClientUpdate, "w1")))
	wantAppendFailed(t, err)
	if c, _ := s.GetClient(ctx(t), "c1"); c.Name != "Clinic 7" || c.Labels["env"] != "staging" {
		t.Fatalf("an update whose record failed was made: %+v", c)
	}
	if l, _ := s.ListClients(ctx(t), store.ClientFilter{Labels: []store.Label{{Key: "tier", Value: "gold"}}}); len(l) != 0 {
		t.Fatalf("an update whose record failed is found by its label: %+v", l)
	}
	_, err = s.UpdateClient(ctx(t), "c1", u, operator(audit.ClientUpdate, "w1"))
	must(t, err)
	_, err = s.UpdateClient(ctx(t), "c1", u, operator(audit.ClientUpdate, "w1")) // the same again: nothing moves
	must(t, err)
	rs := wantTrail(t, s, "w1", from, audit.ClientUpdate)
	want := []audit.Change{
		{Field: audit.ChangeName, Before: "Clinic 7", After: "Clinic Seven"},
		{Field: audit.ChangeLabel + "env", Before: "staging", After: "prod"},
		{Field: audit.ChangeLabel + "tier", After: "gold"},
	}
	if !reflect.DeepEqual(rs[0].Changes, want) {
		t.Fatalf("the update's changes %+v, want %+v", rs[0].Changes, want)
	}

	reads := contract.Limits{Rates: map[contract.RouteClass]contract.Rate{contract.ClassReads: {PerSecond: 5, Burst: 10}}}
	must(t, s.SetClientLimits(ctx(t), "c1", reads, operator(audit.ClientLimitsSet, "w1")))
	must(t, s.SetClientLimits(ctx(t), "c1", reads, operator(audit.ClientLimitsSet, "w1")))
	must(t, s.SetClientLimits(ctx(t), "c1", contract.Limits{}, operator(audit.ClientLimitsClear, "w1")))
	rs = wantTrail(t, s, "w1", from, audit.ClientUpdate, audit.ClientLimitsSet, audit.ClientLimitsSet, audit.ClientLimitsClear)
	set := store.LimitsJSON(reads)
	for i, want := range [][]audit.Change{
		{{Field: audit.ChangeLimits, After: set}},
		nil, // the same limits again: a change of the key plane, no value moved
		{{Field: audit.ChangeLimits, Before: set}},
	} {
		if got := rs[i+1].Changes; !reflect.DeepEqual(got, want) {
			t.Fatalf("limits record %d: changes %+v, want %+v", i+1, got, want)
		}
	}
}

// testClientSearch: clients are found by a name's prefix, letter case
// aside, a page at a time in name order; by labels (every one given), a
// page at a time in creation order; by both; within a workspace and a
// status too.
func testClientSearch(t *testing.T, s Store) {
	_, err := s.EnsureWorkspace(ctx(t), "w1", t0)
	must(t, err)
	_, err = s.EnsureWorkspace(ctx(t), "w2", t0)
	must(t, err)
	prod, us := map[string]string{"env": "prod", "region": "eu"}, map[string]string{"env": "prod", "region": "us"}
	for _, c := range []store.Client{
		named("c1", "w1", 1*time.Second, "Clinic Seven", prod),
		named("c2", "w1", 2*time.Second, "clinic eight", us),
		named("c3", "w2", 3*time.Second, "CLINIC NINE", map[string]string{"env": "staging"}),
		named("c4", "w2", 4*time.Second, "Clinique Zoë", prod),
		named("c5", "w1", 5*time.Second, "Zoë's lab", nil),
		named("c6", "w1", 5*time.Second, "Clinic Seven", prod), // the same name and time as c1's: the id orders them
		named("c7", "w1", 6*time.Second, "", prod),
		named("c8", "w1", 7*time.Second, "Clinic_%", nil),
	} {
		must(t, s.CreateClient(ctx(t), c, operator(audit.ClientCreate, c.WorkspaceID)))
	}
	must(t, s.SetClientStatus(ctx(t), "c4", store.ClientDisabled, operator(audit.ClientDisable, "w2")))
	env := func(v string) store.Label { return store.Label{Key: "env", Value: v} }
	tests := []struct {
		name string
		f    store.ClientFilter
		want []string
	}{
		{"a prefix, in name order", store.ClientFilter{NamePrefix: "clinic"}, []string{"c2", "c3", "c1", "c6", "c8"}},
		{"a shorter prefix", store.ClientFilter{NamePrefix: "clini"}, []string{"c2", "c3", "c1", "c6", "c8", "c4"}},
		{"a prefix in capitals", store.ClientFilter{NamePrefix: "CLINIC S"}, []string{"c1", "c6"}},
		{"a prefix past a non-ASCII letter", store.ClientFilter{NamePrefix: "zoË"}, []string{"c5"}},
		{"a whole name", store.ClientFilter{NamePrefix: "Clinique Zoë"}, []string{"c4"}},
		{"a prefix with LIKE's wildcards", store.ClientFilter{NamePrefix: "clinic_"}, []string{"c8"}},
		{"a prefix no name has", store.ClientFilter{NamePrefix: "x"}, nil},
		{"a page of a prefix", store.ClientFilter{NamePrefix: "clinic", Limit: 2}, []string{"c2", "c3"}},
		{"the next page of a prefix", store.ClientFilter{NamePrefix: "clinic", Limit: 2,
			After: store.ClientCursor{Name: "clinic nine", ID: "c3"}}, []string{"c1", "c6"}},
		{"within a name", store.ClientFilter{NamePrefix: "clinic",
			After: store.ClientCursor{Name: "clinic seven", ID: "c1"}}, []string{"c6", "c8"}},
		{"a label, in creation order", store.ClientFilter{Labels: []store.Label{env("prod")}}, []string{"c1", "c2", "c4", "c6", "c7"}},
		{"two labels", store.ClientFilter{Labels: []store.Label{env("prod"), {Key: "region", Value: "eu"}}}, []string{"c1", "c4", "c6", "c7"}},
		{"a label no client has", store.ClientFilter{Labels: []store.Label{env("dev")}}, nil},
		{"a page of a label", store.ClientFilter{Labels: []store.Label{env("prod")}, Limit: 2}, []string{"c1", "c2"}},
		{"the next page of a label", store.ClientFilter{Labels: []store.Label{env("prod")}, Limit: 2,
			After: store.ClientCursor{CreatedAt: at(2 * time.Second), ID: "c2"}}, []string{"c4", "c6"}},
		{"a prefix and a label", store.ClientFilter{NamePrefix: "clinic", Labels: []store.Label{{Key: "region", Value: "eu"}}},
			[]string{"c1", "c6"}},
		{"a page of a prefix and a label", store.ClientFilter{NamePrefix: "clini", Labels: []store.Label{env("prod")}, Limit: 2},
			[]string{"c2", "c1"}},
		{"the next page of a prefix and a label", store.ClientFilter{NamePrefix: "clini", Labels: []store.Label{env("prod")}, Limit: 2,
			After: store.ClientCursor{Name: "clinic seven", ID: "c1"}}, []string{"c6", "c4"}},
		{"a label in a workspace", store.ClientFilter{WorkspaceID: "w1", Labels: []store.Label{env("prod")}}, []string{"c1", "c2", "c6", "c7"}},
		{"a prefix of a status", store.ClientFilter{NamePrefix: "clini", Status: store.ClientActive}, []string{"c2", "c3", "c1", "c6", "c8"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			list, err := s.ListClients(ctx(t), tt.f)
			must(t, err)
			var got []string
			for _, c := range list {
				got = append(got, c.ID)
			}
			if !slices.Equal(got, tt.want) {
				t.Fatalf("ListClients(%+v) = %v, want %v", tt.f, got, tt.want)
			}
		})
	}
	// A rename moves the client in every order by name, its labels' too.
	name := "Lab Six"
	_, err = s.UpdateClient(ctx(t), "c6", store.ClientUpdate{Name: &name}, operator(audit.ClientUpdate, "w1"))
	must(t, err)
	for prefix, want := range map[string]string{"lab": "c6", "clinic s": "c1"} {
		list, err := s.ListClients(ctx(t), store.ClientFilter{NamePrefix: prefix, Labels: []store.Label{env("prod")}})
		if err != nil || len(list) != 1 || list[0].ID != want {
			t.Fatalf("%q and env=prod after the rename: %+v, %v; want %s", prefix, list, err, want)
		}
	}
}
