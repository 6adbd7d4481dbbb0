package store

import (
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
