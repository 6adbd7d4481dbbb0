package storetest

import (
	"bytes"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/health-data-connect/hdc/backend/audit"
	"github.com/health-data-connect/hdc/backend/store"
)

func record(id, cc, ws, client string) store.Record {
	return store.Record{
		ID: id, CareContextID: cc, WorkspaceID: ws, ClientID: client,
		BlobKey: "ab" + id, SHA1: bytes.Repeat([]byte{9}, 20), Size: 42, ContentType: "audio/wave",
		Title: "visit.wav", Tasks: []string{"pii", "smart"}, Status: store.RecordPending, Version: 1,
		CreatedAt: at(0), UpdatedAt: at(0),
	}
}

func testRecords(t *testing.T, s Store) {
	seed(t, s, "w1", "c1")
	seed(t, s, "w2", "c2")
	r := record("r1", "cc1", "w1", "c1")
	must(t, s.CreateRecord(ctx(t), r, ev(audit.RecordUpload)))
	wantErr(t, s.CreateRecord(ctx(t), record("r2", "cc1", "w1", "c1"), ev(audit.RecordUpload)), store.ErrConflict)
	wantErr(t, s.CreateRecord(ctx(t), record("r3", "cc3", "nope", "c1"), ev(audit.RecordUpload)), store.ErrNotFound)
	empty := record("r4", "cc4", "w2", "c2")
	empty.Tasks = nil
	must(t, s.CreateRecord(ctx(t), empty, ev(audit.RecordUpload)))

	got, err := s.GetRecord(ctx(t), "w1", "cc1")
	must(t, err)
	if fmt.Sprint(got) != fmt.Sprint(r) {
		t.Fatalf("GetRecord = %+v, want %+v", got, r)
	}
	got, err = s.GetRecord(ctx(t), "w2", "cc4")
	must(t, err)
	if len(got.Tasks) != 0 {
		t.Fatalf("Tasks = %q, want none", got.Tasks)
	}
	_, err = s.GetRecord(ctx(t), "w2", "cc1")
	wantErr(t, err, store.ErrNotFound)
	_, err = s.GetRecord(ctx(t), "w1", "nope")
	wantErr(t, err, store.ErrNotFound)
}

func testRecordResources(t *testing.T, s Store) {
	seed(t, s, "w1", "c1")
	must(t, s.CreateRecord(ctx(t), record("r1", "cc1", "w1", "c1"), ev(audit.RecordUpload)))
	batch := func(ids ...string) []store.Resource {
		var out []store.Resource
		for _, id := range ids {
			out = append(out, store.Resource{ResourceType: "Observation", ID: id, JSON: []byte(`{"resourceType":"Observation","id":"` + id + `"}`)})
		}
		return out
	}
	r, err := s.AddRecordResources(ctx(t), "cc1", batch("a", "b"), at(time.Minute), ev(audit.ResourcesSubmit))
	must(t, err)
	if r.Version != 2 || r.Status != store.RecordParsed || !r.UpdatedAt.Equal(at(time.Minute)) || !r.CreatedAt.Equal(at(0)) || r.ID != "r1" {
		t.Fatalf("after first batch: %+v", r)
	}
	r, err = s.AddRecordResources(ctx(t), "cc1", batch("c"), at(time.Hour), ev(audit.ResourcesSubmit))
	must(t, err)
	if r.Version != 3 {
		t.Fatalf("version = %d, want 3", r.Version)
	}
	_, err = s.AddRecordResources(ctx(t), "nope", batch("d"), at(time.Hour), ev(audit.ResourcesSubmit))
	wantErr(t, err, store.ErrNotFound)

	res, err := s.ListRecordResources(ctx(t), "r1")
	must(t, err)
	var ids []string
	for i, x := range res {
		if x.Seq != int64(i+1) || x.RecordID != "r1" || x.ResourceType != "Observation" || !bytes.Contains(x.JSON, []byte(x.ID)) {
			t.Fatalf("resource %d = %+v", i, x)
		}
		ids = append(ids, x.ID)
	}
	if !slices.Equal(ids, []string{"a", "b", "c"}) {
		t.Fatalf("resource ids = %q", ids)
	}
}

func testRecordAliases(t *testing.T, s Store) {
	seed(t, s, "w1", "c1")
	must(t, s.CreateRecord(ctx(t), record("r1", "cc1", "w1", "c1"), ev(audit.RecordUpload)))
	must(t, s.CreateRecord(ctx(t), record("r2", "cc2", "w1", "c1"), ev(audit.RecordUpload)))
	aliases, err := s.RecordAliases(ctx(t), "cc1")
	must(t, err)
	if len(aliases) != 0 {
		t.Fatalf("aliases of a new record = %v", aliases)
	}
	_, err = s.RecordAliases(ctx(t), "nope")
	wantErr(t, err, store.ErrNotFound)

	res := func(id string, aliases ...string) store.Resource {
		return store.Resource{ResourceType: "Patient", ID: id, JSON: []byte(`{"resourceType":"Patient","id":"` + id + `"}`), Aliases: aliases}
	}
	_, err = s.AddRecordResources(ctx(t), "cc1", []store.Resource{res("a", "Patient/pt", "urn:uuid:p"), res("b")}, at(time.Minute), ev(audit.ResourcesSubmit))
	must(t, err)
	_, err = s.AddRecordResources(ctx(t), "cc1", []store.Resource{res("c", "Patient/other")}, at(2*time.Minute), ev(audit.ResourcesSubmit))
	must(t, err)
	// Another record may use the same aliases.
	_, err = s.AddRecordResources(ctx(t), "cc2", []store.Resource{res("d", "Patient/pt")}, at(time.Minute), ev(audit.ResourcesSubmit))
	must(t, err)
	want := map[string]string{"Patient/pt": "a", "urn:uuid:p": "a", "Patient/other": "c"}
	aliases, err = s.RecordAliases(ctx(t), "cc1")
	must(t, err)
	if fmt.Sprint(aliases) != fmt.Sprint(want) {
		t.Fatalf("aliases = %v, want %v", aliases, want)
	}

	// An alias the record has already is a conflict, and nothing of the
	// batch is stored.
	_, err = s.AddRecordResources(ctx(t), "cc1", []store.Resource{res("e", "Patient/new"), res("f", "Patient/pt")}, at(time.Hour), ev(audit.ResourcesSubmit))
	wantErr(t, err, store.ErrConflict)
	aliases, err = s.RecordAliases(ctx(t), "cc1")
	must(t, err)
	if fmt.Sprint(aliases) != fmt.Sprint(want) {
		t.Fatalf("aliases after a refused batch = %v, want %v", aliases, want)
	}
	got, err := s.ListRecordResources(ctx(t), "r1")
	must(t, err)
	if len(got) != 3 {
		t.Fatalf("%d resources after a refused batch, want 3", len(got))
	}
	r, err := s.GetRecord(ctx(t), "w1", "cc1")
	must(t, err)
	if r.Version != 3 {
		t.Fatalf("version after a refused batch = %d, want 3", r.Version)
	}
}
