package apiclient

import (
	"bytes"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/health-data-connect/hdc/internal/testkit"
)

// TestProgress: a bar is drawn only on a terminal and for transfers over
// progressMin (known ahead, or once that much has passed), and the bytes
// pass through it unchanged.
func TestProgress(t *testing.T) {
	big := testkit.RandomBytes(progressMin + 1<<20)
	tests := []struct {
		name    string
		data    []byte
		size    int64
		wantBar bool
	}{
		{"small", big[:1<<20], 1 << 20, false},
		{"small, size unknown", big[:1<<20], -1, false},
		{"large", big, int64(len(big)), true},
		{"large, size unknown", big, -1, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var bar bytes.Buffer
			r := Progress{w: &bar}.reader(iotest.HalfReader(bytes.NewReader(tt.data)), tt.size, "upload")
			got, err := io.ReadAll(r)
			if err != nil || !bytes.Equal(got, tt.data) {
				t.Fatalf("the bytes changed going through (%v)", err)
			}
			if drawn := strings.Contains(bar.String(), "upload"); drawn != tt.wantBar {
				t.Fatalf("bar drawn %v, want %v: %q", drawn, tt.wantBar, bar.String())
			}
		})
	}
}

// TestProgressOnlyOnTerminals: neither a buffer nor a file is a terminal,
// so neither gets a bar.
func TestProgressOnlyOnTerminals(t *testing.T) {
	f, err := os.Create(filepath.Join(t.TempDir(), "stderr"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	for _, w := range []io.Writer{&bytes.Buffer{}, f} {
		if p := NewProgress(w); p.w != nil {
			t.Fatalf("a bar on %T", w)
		}
	}
}
