package hdc

import (
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"unicode"
)

// TestDocsLinks holds every relative link of README.md and docs/*.md to the
// repository: the file it names exists, and its #anchor is a heading of
// that file, as GitHub makes anchors. A link with a scheme (https:, mailto:)
// is not checked.
func TestDocsLinks(t *testing.T) {
	files, err := filepath.Glob("docs/*.md")
	if err != nil {
		t.Fatal(err)
	}
	files = append([]string{"README.md"}, files...)
	for _, file := range files {
		t.Run(file, func(t *testing.T) {
			n, errs := checkLinks(".", file)
			for _, err := range errs {
				t.Error(err)
			}
			t.Logf("%d relative links", n)
		})
	}
}

// TestDocsLinksRefuse shows that the check bites: each broken link of a
// small tree is refused, and each good one is not.
func TestDocsLinksRefuse(t *testing.T) {
	root := t.TempDir()
	write := func(name, text string) {
		t.Helper()
		path := filepath.Join(root, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("docs/keys.md", "# Keys: the key plane and rotation\n\n## A standalone edge: the registry file\n\n```sh\n# Not a heading\n```\n\n## Twice\n\n## Twice\n")
	write("docs/api.yaml", "openapi: 3.1.0\n")
	for _, tc := range []struct {
		link, err string // err: what the refusal says; "" for none
	}{
		{"docs/keys.md", ""},
		{"docs/keys.md#keys-the-key-plane-and-rotation", ""},
		{"docs/keys.md#a-standalone-edge-the-registry-file", ""},
		{"docs/keys.md#twice-1", ""},
		{"docs/api.yaml#L1", ""},
		{"docs/", ""},
		{"#a-heading-here", ""},
		{"https://example.org/no/such/page#nowhere", ""},
		{"mailto:someone@example.org", ""},
		{"docs/key.md", "no such file"},
		{"docs/keys.md#keys", "has no heading #keys"},
		{"docs/keys.md#not-a-heading", "has no heading #not-a-heading"},
		{"docs/keys.md#twice-2", "has no heading #twice-2"},
		{"docs/keys.md#A-standalone-edge-the-registry-file", "has no heading"},
		{"docs/api.yaml#paths", "not a Markdown file"},
		{"#nowhere", "has no heading #nowhere"},
		{"../outside.md", "outside the repository"},
	} {
		t.Run(tc.link, func(t *testing.T) {
			write("README.md", "# Project\n\n## A heading here\n\nSee [the link]("+tc.link+"), not `[code](docs/none.md)`.\n")
			_, errs := checkLinks(root, "README.md")
			switch {
			case tc.err == "" && len(errs) > 0:
				t.Fatalf("refused: %v", errs)
			case tc.err != "" && len(errs) != 1:
				t.Fatalf("%d refusals, want 1: %v", len(errs), errs)
			case tc.err != "" && !strings.Contains(errs[0].Error(), tc.err):
				t.Fatalf("refused with %q, want %q", errs[0], tc.err)
			}
		})
	}
}

// TestGitHubAnchors holds anchorOf to the anchors GitHub gives headings of
// these files.
func TestGitHubAnchors(t *testing.T) {
	for heading, want := range map[string]string{
		"A walkthrough with `hdc call`":         "a-walkthrough-with-hdc-call",
		"Keys: the key plane and rotation":      "keys-the-key-plane-and-rotation",
		"Freshness: iat, jti and replays":       "freshness-iat-jti-and-replays",
		"A fleet: N edges over M backends":      "a-fleet-n-edges-over-m-backends",
		"The spool's threshold, 1 MiB → 2 MiB":  "the-spools-threshold-1-mib--2-mib",
		"Stock Caddy with xcaddy":               "stock-caddy-with-xcaddy",
		"compose.yaml":                          "composeyaml",
		"Scale-out":                             "scale-out",
		"snake_case stays":                      "snake_case-stays",
		"The [linked](docs/api.md) part":        "the-linked-part",
		"What the `hdc_jwe` handler *does*":     "what-the-hdc_jwe-handler-does",
		"Décisions où la spécification se tait": "décisions-où-la-spécification-se-tait",
	} {
		if got := anchorOf(heading); got != want {
			t.Errorf("anchorOf(%q) = %q, want %q", heading, got, want)
		}
	}
}

var (
	// inlineLink is a link or image: [text](target "title").
	inlineLink = regexp.MustCompile(`\]\(\s*<?([^)\s>]*)>?(?:\s+"[^"]*")?\s*\)`)
	// referenceLink is a link reference definition: [label]: target.
	referenceLink = regexp.MustCompile(`(?m)^ {0,3}\[[^\]]+\]:\s*<?([^\s>]+)>?`)
	// atxHeading is a heading line: # Title, with optional closing #s.
	atxHeading = regexp.MustCompile(`^ {0,3}(#{1,6})(?:[ \t]+(.*?))?(?:[ \t]+#+)?[ \t]*$`)
	// lineAnchor is GitHub's anchor of a line or lines of a file.
	lineAnchor = regexp.MustCompile(`^L[0-9]+(-L[0-9]+)?$`)
	// scheme starts a link that leaves the repository (https:, mailto:).
	scheme = regexp.MustCompile(`^[A-Za-z][A-Za-z0-9+.-]*:`)
)

// checkLinks checks the relative links of file, a Markdown file under
// root (both as the repository names them), and returns how many it
// checked and what is wrong with them, each error naming file and line.
func checkLinks(root, file string) (int, []error) {
	text, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(file)))
	if err != nil {
		return 0, []error{err}
	}
	prose := withoutCode(string(text))
	var targets [][2]int // each target's start and end in prose
	for _, re := range []*regexp.Regexp{inlineLink, referenceLink} {
		for _, m := range re.FindAllStringSubmatchIndex(prose, -1) {
			targets = append(targets, [2]int{m[2], m[3]})
		}
	}
	slices.SortFunc(targets, func(a, b [2]int) int { return a[0] - b[0] })
	n := 0
	var errs []error
	for _, at := range targets {
		target := prose[at[0]:at[1]]
		if target == "" || scheme.MatchString(target) || strings.HasPrefix(target, "//") {
			continue
		}
		n++
		if err := checkLink(root, file, target); err != nil {
			line := 1 + strings.Count(prose[:at[0]], "\n")
			errs = append(errs, fmt.Errorf("%s:%d: link %q: %v", file, line, target, err))
		}
	}
	return n, errs
}

// checkLink checks one relative link of file: the file or directory it
// names, and its fragment.
func checkLink(root, file, target string) error {
	rawPath, fragment, _ := strings.Cut(target, "#")
	path, err := url.PathUnescape(rawPath)
	if err != nil {
		return err
	}
	dest := file
	switch {
	case strings.HasPrefix(path, "/"): // GitHub reads these from the repository's root
		dest = filepath.ToSlash(filepath.Clean(strings.TrimPrefix(path, "/")))
	case path != "":
		dest = filepath.ToSlash(filepath.Join(filepath.Dir(file), path))
	}
	if dest == ".." || strings.HasPrefix(dest, "../") {
		return fmt.Errorf("points outside the repository")
	}
	info, err := os.Stat(filepath.Join(root, filepath.FromSlash(dest)))
	if err != nil {
		return fmt.Errorf("no such file: %s", dest)
	}
	if fragment == "" {
		return nil
	}
	if info.IsDir() || !strings.HasSuffix(dest, ".md") {
		if !info.IsDir() && lineAnchor.MatchString(fragment) {
			return nil
		}
		return fmt.Errorf("#%s: %s is not a Markdown file, whose headings make anchors", fragment, dest)
	}
	text, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(dest)))
	if err != nil {
		return err
	}
	if !slices.Contains(anchors(string(text)), fragment) {
		return fmt.Errorf("%s has no heading #%s", dest, fragment)
	}
	return nil
}

// anchors returns the anchors of a Markdown text's headings, as GitHub
// makes them: each heading's anchorOf, a repeated one suffixed -1, -2, ….
func anchors(text string) []string {
	var out []string
	seen := map[string]int{}
	for line := range strings.SplitSeq(withoutCode(text), "\n") {
		m := atxHeading.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		a := anchorOf(m[2])
		if k := seen[a]; k > 0 {
			seen[a]++
			a = fmt.Sprintf("%s-%d", a, k)
		} else {
			seen[a] = 1
		}
		out = append(out, a)
	}
	return out
}

// headingLink is a link or image in a heading, whose text is its anchor's.
var headingLink = regexp.MustCompile(`!?\[([^\]]*)\]\([^)]*\)`)

// anchorOf is GitHub's anchor of a heading's text: its links reduced to
// their text, as rendered; then lower case, every character but letters,
// digits, '-', '_' and spaces removed (code spans' backticks and emphasis
// with * among them), and each space a '-'. Emphasis with _ would keep its
// underscores here, and lose them on GitHub: no heading here has it.
func anchorOf(heading string) string {
	heading = headingLink.ReplaceAllString(heading, "$1")
	return strings.Map(func(r rune) rune {
		switch {
		case r == ' ':
			return '-'
		case r == '-' || r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r):
			return r
		}
		return -1
	}, strings.ToLower(strings.TrimSpace(heading)))
}

// withoutCode blanks a Markdown text's fenced code blocks and code spans,
// keeping its line breaks, so that what they hold is neither a link nor a
// heading and what is left keeps its line numbers. The text between the
// backticks of a code span is kept, as text: headings keep the words their
// anchors are made of.
func withoutCode(text string) string {
	lines := strings.Split(text, "\n")
	var fence string
	for i, line := range lines {
		trimmed := strings.TrimLeft(line, " ")
		switch {
		case fence != "":
			if strings.HasPrefix(trimmed, fence) && strings.Trim(trimmed, fence[:1]+" ") == "" {
				fence = ""
			}
			lines[i] = ""
		case strings.HasPrefix(trimmed, "```") || strings.HasPrefix(trimmed, "~~~"):
			fence = trimmed[:3]
			for len(fence) < len(trimmed) && trimmed[len(fence)] == fence[0] {
				fence += fence[:1]
			}
			lines[i] = ""
		default:
			lines[i] = withoutCodeSpans(line)
		}
	}
	return strings.Join(lines, "\n")
}

// withoutCodeSpans replaces each code span of a line (a run of backticks,
// what it holds, and the same run) with what it holds, stripped of the
// characters a link needs, so that `[x](y)` is no link.
func withoutCodeSpans(line string) string {
	var b strings.Builder
	for {
		open := strings.IndexByte(line, '`')
		if open < 0 {
			b.WriteString(line)
			return b.String()
		}
		run := len(line[open:]) - len(strings.TrimLeft(line[open:], "`"))
		tick := line[open : open+run]
		rest := line[open+run:]
		end := -1
		for i := 0; i < len(rest); {
			j := strings.Index(rest[i:], tick)
			if j < 0 {
				break
			}
			j += i
			k := j + run
			if (j == 0 || rest[j-1] != '`') && (k == len(rest) || rest[k] != '`') {
				end = j
				break
			}
			i = k
		}
		if end < 0 { // no closing run: the backticks are text
			b.WriteString(line[:open+run])
			line = rest
			continue
		}
		b.WriteString(line[:open])
		b.WriteString(strings.Map(func(r rune) rune {
			if strings.ContainsRune("[]()<>", r) {
				return ' '
			}
			return r
		}, rest[:end]))
		line = rest[end+run:]
	}
}
