package store

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
	"testing/fstest"
)

func TestReadMigrations(t *testing.T) {
	file := func(s string) *fstest.MapFile { return &fstest.MapFile{Data: []byte(s)} }
	tests := []struct {
		name     string
		files    fstest.MapFS
		versions []int64
		wantErr  bool
	}{
		{"in version order, not name order", fstest.MapFS{
			"m/0012_outbox.sql": file("b"), "m/0001_init.sql": file("a"), "m/0003_x.sql": file("c")}, []int64{1, 3, 12}, false},
		{"none", fstest.MapFS{}, nil, false},
		{"no version", fstest.MapFS{"m/init.sql": file("")}, nil, true},
		{"version zero", fstest.MapFS{"m/0000_zero.sql": file("")}, nil, true},
		{"not a number", fstest.MapFS{"m/x1_bad.sql": file("")}, nil, true},
		{"same version twice", fstest.MapFS{"m/0001_a.sql": file(""), "m/01_b.sql": file("")}, nil, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ms, err := ReadMigrations(tt.files, "m/*.sql")
			if (err != nil) != tt.wantErr {
				t.Fatalf("err = %v, wantErr %v", err, tt.wantErr)
			}
			var got []int64
			for _, m := range ms {
				got = append(got, m.Version)
				if m.Script != string(tt.files[m.Name].Data) {
					t.Fatalf("%s: script %q", m.Name, m.Script)
				}
			}
			if len(got) != len(tt.versions) {
				t.Fatalf("versions %v, want %v", got, tt.versions)
			}
			for i := range got {
				if got[i] != tt.versions[i] {
					t.Fatalf("versions %v, want %v", got, tt.versions)
				}
			}
		})
	}
}

// fakeMigrator records the migrations applied over a recorded newest version.
type fakeMigrator struct {
	recorded int64
	applied  []int64
	fail     int64 // version whose script fails
}

func (f *fakeMigrator) CreateTable(context.Context) error { return nil }

func (f *fakeMigrator) Apply(_ context.Context, m Migration) error {
	if m.Version == f.fail {
		return errors.New("syntax error")
	}
	if m.Version > f.recorded {
		f.applied = append(f.applied, m.Version)
		f.recorded = m.Version
	}
	return nil
}

func (f *fakeMigrator) Newest(context.Context) (int64, error) { return f.recorded, nil }

func TestMigrate(t *testing.T) {
	files := fstest.MapFS{"m/0001_a.sql": {Data: []byte("a")}, "m/0002_b.sql": {Data: []byte("b")}}
	tests := []struct {
		name    string
		db      fakeMigrator
		applied []int64
		wantErr string
	}{
		{"empty database", fakeMigrator{}, []int64{1, 2}, ""},
		{"up to date", fakeMigrator{recorded: 2}, nil, ""},
		{"one behind", fakeMigrator{recorded: 1}, []int64{2}, ""},
		{"newer than the program", fakeMigrator{recorded: 3}, nil, "newer than this program's 2"},
		{"a failing script", fakeMigrator{fail: 2}, []int64{1}, "migration m/0002_b.sql: syntax error"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := Migrate(context.Background(), &tt.db, files, "m/*.sql")
			if (err == nil) != (tt.wantErr == "") || (err != nil && !strings.Contains(err.Error(), tt.wantErr)) {
				t.Fatalf("err = %v, want %q", err, tt.wantErr)
			}
			if !slices.Equal(tt.db.applied, tt.applied) {
				t.Fatalf("applied %v, want %v", tt.db.applied, tt.applied)
			}
		})
	}
}
