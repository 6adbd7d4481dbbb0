package main

import (
	"bufio"
	"errors"
	"io"
	"os/exec"
	"strconv"
	"strings"
)

// readTotals returns the instructions a callgrind output file counts in
// all, from its "totals:" line, or its "summary:" line when it has none.
func readTotals(r io.Reader) (int64, error) {
	var summary string
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if rest, ok := strings.CutPrefix(line, "totals:"); ok {
			return firstCount(rest)
		}
		if rest, ok := strings.CutPrefix(line, "summary:"); ok {
			summary = rest
		}
	}
	if err := sc.Err(); err != nil {
		return 0, err
	}
	if summary == "" {
		return 0, errors.New("no totals or summary line in the callgrind output")
	}
	return firstCount(summary)
}

// firstCount is the first of the counts of a totals or summary line: the
// instructions, callgrind's first event.
func firstCount(s string) (int64, error) {
	fields := strings.Fields(s)
	if len(fields) == 0 {
		return 0, errors.New("an empty totals line in the callgrind output")
	}
	return strconv.ParseInt(fields[0], 10, 64)
}

// annotation is callgrind_annotate's table of functions: each function's
// self cost in instructions, and which functions are the collector's.
type annotation struct {
	costs     map[string]int64
	collector map[string]bool
}

// annotate runs callgrind_annotate on a callgrind output file.
func annotate(path string) (annotation, error) {
	cmd := exec.Command("callgrind_annotate", "--inclusive=no", "--threshold=100", "--auto=no", path)
	out, err := cmd.Output()
	if err != nil {
		return annotation{}, err
	}
	return parseAnnotate(strings.NewReader(string(out)))
}

// parseAnnotate reads callgrind_annotate's table of functions (from its
// "file:function" heading to the blank line after it), each line a count,
// with or without its percentage, then file:function [object]. Functions of
// the same name (in more than one file: code inlined from another) add up;
// a function is the collector's when most of its cost lies in the
// collector's source files.
func parseAnnotate(r io.Reader) (annotation, error) {
	a := annotation{costs: map[string]int64{}, collector: map[string]bool{}}
	inCollector := map[string]int64{} // each function's cost in the collector's files
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	in := false
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if !in {
			in = strings.HasSuffix(line, " file:function")
			continue
		}
		if line == "" && len(a.costs) > 0 {
			break
		}
		if file, fn, n, ok := parseCostLine(line); ok {
			a.costs[fn] += n
			if collectorFile(file) {
				inCollector[fn] += n
			}
		}
	}
	for fn, n := range inCollector {
		a.collector[fn] = 2*n > a.costs[fn]
	}
	return a, sc.Err()
}

// collectorFiles are the runtime's source files of the garbage collector:
// marking, sweeping, scavenging, the write barrier and the heap bitmap.
var collectorFiles = []string{"/runtime/mgc", "/runtime/mbitmap.go", "/runtime/mwbbuf.go", "/runtime/mspanset.go",
	"/runtime/mcheckmark.go", "/internal/runtime/gc/"}

func collectorFile(file string) bool {
	for _, f := range collectorFiles {
		if strings.Contains(file, f) {
			return true
		}
	}
	return false
}

// parseCostLine reads one line of callgrind_annotate's table of functions.
func parseCostLine(line string) (file, fn string, n int64, ok bool) {
	count, rest, _ := strings.Cut(line, " ")
	n, err := strconv.ParseInt(strings.ReplaceAll(count, ",", ""), 10, 64)
	if err != nil {
		return "", "", 0, false
	}
	rest = strings.TrimSpace(rest)
	if strings.HasPrefix(rest, "(") { // the percentage
		_, rest, _ = strings.Cut(rest, ")")
		rest = strings.TrimSpace(rest)
	}
	if i := strings.LastIndex(rest, " ["); i >= 0 && strings.HasSuffix(rest, "]") {
		rest = rest[:i]
	}
	file, fn, ok = strings.Cut(rest, ":") // the file's name holds no colon
	return file, fn, n, ok
}

// costGroups are the groups the edge's instructions are summed in, each
// with the prefixes of the function names it takes; a function in none is
// in "other".
var costGroups = []struct {
	name     string
	prefixes []string
}{
	{"ours", []string{"github.com/health-data-connect/"}},
	{"Caddy", []string{"github.com/caddyserver/"}},
	{"net/http", []string{"net/http.", "net/http/", "net/textproto.", "golang.org/x/net/http", "vendor/golang.org/x/net/http"}},
	{"runtime", []string{"runtime.", "internal/runtime/", "runtime/"}},
	{"crypto", []string{"crypto/", "golang.org/x/crypto/", "vendor/golang.org/x/crypto/"}},
}

// otherGroup is the group of a function no prefix of costGroups names, and
// collectorGroup the group of the collector's, whatever their names.
const (
	otherGroup     = "other"
	collectorGroup = "collector"
)

// groupOf returns the group of the function named fn, which is the
// collector's when collector says so.
func groupOf(fn string, collector bool) string {
	if collector {
		return collectorGroup
	}
	for _, g := range costGroups {
		for _, p := range g.prefixes {
			if strings.HasPrefix(fn, p) {
				return g.name
			}
		}
	}
	return otherGroup
}

// byGroup sums costs by the group of each function.
func byGroup(a annotation) map[string]int64 {
	sums := map[string]int64{}
	for fn, n := range a.costs {
		sums[groupOf(fn, a.collector[fn])] += n
	}
	return sums
}
