package blob

import (
	"os"
	"path/filepath"
	"testing"
)

// TestSweepStaged: a staged file nobody holds (its writer died) is
// removed; one a live writer holds, and files of other names, are kept.
func TestSweepStaged(t *testing.T) {
	dir := t.TempDir()
	dead, err := os.CreateTemp(dir, stagedPattern) // as a crashed process leaves it: no lock
	if err != nil {
		t.Fatal(err)
	}
	dead.Close()
	live, err := stage(dir, stagedPattern)
	if err != nil {
		t.Fatal(err)
	}
	defer live.Close()
	other := filepath.Join(dir, "keep-me")
	if err := os.WriteFile(other, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	n, err := sweepStaged(dir, stagedPattern)
	if err != nil || n != 1 {
		t.Fatalf("sweepStaged = %d, %v; want 1", n, err)
	}
	tests := []struct {
		name, path string
		kept       bool
	}{
		{"the dead writer's file", dead.Name(), false},
		{"the live writer's file", live.Name(), true},
		{"a file of another name", other, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if _, err := os.Stat(tt.path); (err == nil) != tt.kept {
				t.Fatalf("kept = %v, want %v", err == nil, tt.kept)
			}
		})
	}
}
