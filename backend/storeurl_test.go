package backend

import "testing"

func TestSQLitePath(t *testing.T) {
	tests := []struct {
		url, want string
		wantErr   bool
	}{
		{"", "/d/hdc.db", false},
		{"/abs/x.db", "/abs/x.db", false},
		{"rel/x.db", "rel/x.db", false},
		{"sqlite:rel/x.db", "rel/x.db", false},
		{"sqlite:///abs/x.db", "/abs/x.db", false},
		{"file:/abs/x.db", "/abs/x.db", false},
		{"mysql://u@h/db", "", true},
		{"sqlite:", "", true},
	}
	for _, tt := range tests {
		got, err := sqlitePath(tt.url, "/d")
		if (err != nil) != tt.wantErr || got != tt.want {
			t.Errorf("sqlitePath(%q) = %q, %v; want %q, error %v", tt.url, got, err, tt.want, tt.wantErr)
		}
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
		if got := sharedStore(url); got != want {
			t.Errorf("sharedStore(%q) = %v, want %v", url, got, want)
		}
	}
}
