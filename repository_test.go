package hdc

import (
	"bytes"
	"io"
	"os"
	"os/exec"
	"strings"
	"testing"
)

// maxTracked is the largest file the repository may hold outside
// largeFixtures: a clone downloads every version of every file.
const maxTracked = 2 << 20

// largeFixtures are the tracked files allowed past maxTracked, each for a
// reason of its own. None is today.
var largeFixtures = map[string]string{}

// executableMagics are the first bytes of the executable formats a build
// leaves behind: ELF, Mach-O (both widths, both byte orders), PE and
// WebAssembly.
var executableMagics = [][]byte{
	[]byte("\x7fELF"),
	{0xfe, 0xed, 0xfa, 0xce}, {0xfe, 0xed, 0xfa, 0xcf},
	{0xce, 0xfa, 0xed, 0xfe}, {0xcf, 0xfa, 0xed, 0xfe},
	[]byte("MZ"),
	[]byte("\x00asm"),
}

// TestRepositoryHoldsSource fails when a tracked file is a compiled
// program, or larger than maxTracked outside largeFixtures: the repository
// holds source, and build output stays out (.gitignore).
func TestRepositoryHoldsSource(t *testing.T) {
	for _, path := range trackedFiles(t) {
		t.Run(path, func(t *testing.T) {
			f, err := os.Open(path)
			if os.IsNotExist(err) {
				return // deleted in the work tree, not yet in the index
			}
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			st, err := f.Stat()
			if err != nil {
				t.Fatal(err)
			}
			if _, ok := largeFixtures[path]; !ok && st.Size() > maxTracked {
				t.Errorf("%s is %d bytes, past the %d a tracked file may have (largeFixtures lists the exceptions)", path, st.Size(), maxTracked)
			}
			head := make([]byte, 4)
			n, _ := io.ReadFull(f, head)
			if isExecutable(head[:n]) {
				t.Errorf("%s is a compiled program: build output is not committed", path)
			}
		})
	}
}

// isExecutable reports whether a file starting with head is a compiled
// program.
func isExecutable(head []byte) bool {
	for _, m := range executableMagics {
		if bytes.HasPrefix(head, m) {
			return true
		}
	}
	return false
}

// TestIsExecutable holds the check to the formats it names, and to text
// that starts like none of them.
func TestIsExecutable(t *testing.T) {
	for _, tc := range []struct {
		head string
		want bool
	}{
		{"\x7fELF", true},
		{"\xcf\xfa\xed\xfe", true},
		{"MZ\x90\x00", true},
		{"\x00asm", true},
		{"#!/u", false},
		{"pack", false},
		{"\x89PNG", false},
		{"", false},
	} {
		if got := isExecutable([]byte(tc.head)); got != tc.want {
			t.Errorf("isExecutable(%q) = %v, want %v", tc.head, got, tc.want)
		}
	}
}

// trackedFiles lists the files git tracks in this checkout.
func trackedFiles(t *testing.T) []string {
	t.Helper()
	out, err := exec.Command("git", "ls-files", "-z").Output()
	if err != nil {
		t.Fatalf("git ls-files (the tests run in a clone): %v", err)
	}
	files := strings.Split(strings.TrimSuffix(string(out), "\x00"), "\x00")
	if len(files) < 100 {
		t.Fatalf("git ls-files listed %d files: not the repository's root", len(files))
	}
	return files
}
