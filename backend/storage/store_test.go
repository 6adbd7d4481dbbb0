package storage

import "testing"

func TestSQLitePath(t *testing.T) {
	tests := []struct {
		name      string
		url, want string
		wantErr   bool
	}{
		{"default in data dir", "", "/d/hdc.db", false},
		{"absolute path", "/abs/x.db", "/abs/x.db", false},
		{"relative path", "rel/x.db", "rel/x.db", false},
		{"sqlite relative", "sqlite:rel/x.db", "rel/x.db", false},
		{"sqlite absolute URL", "sqlite:///abs/x.db", "/abs/x.db", false},
		{"file URL", "file:/abs/x.db", "/abs/x.db", false},
		{"other database", "mysql://u@h/db", "", true},
		{"empty sqlite path", "sqlite:", "", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := sqlitePath(tt.url, "/d")
			if (err != nil) != tt.wantErr || got != tt.want {
				t.Errorf("sqlitePath(%q) = %q, %v; want %q, error %v", tt.url, got, err, tt.want, tt.wantErr)
			}
		})
	}
}

func TestSharedStore(t *testing.T) {
	for url, want := range map[string]bool{
		"postgres://u@h/db":        true,
		"postgresql://u@h:5432/db": true,
		"POSTGRES://u@h/db":        true,
		"":                         false,
		"sqlite:/x.db":             false,
		"/data/postgres/hdc.db":    false,
		"postgres.db":              false,
	} {
		t.Run(url, func(t *testing.T) {
			if got := Shared(url); got != want {
				t.Errorf("Shared(%q) = %v, want %v", url, got, want)
			}
		})
	}
}
