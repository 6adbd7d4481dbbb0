package backend

import (
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
)

// awsSDKRow starts the row of the AWS SDK's own variables, which the SDK
// reads itself: no setting of ours.
const awsSDKRow = "AWS_REGION"

// TestConfigurationReference holds the table of the backend's settings in
// docs/configuration.md (its **Backend** part) to Settings: each row is a
// setting, with its variables, its flag and its default, and each setting
// has a row.
func TestConfigurationReference(t *testing.T) {
	cfg := DefaultConfig()
	level := zap.NewAtomicLevelAt(zapcore.InfoLevel)
	byFlag := map[string]Setting{}
	for _, s := range cfg.Settings(&level) {
		byFlag[s.Flag] = s
	}
	for _, row := range backendSettingsRows(t) {
		vars, flags := codeSpans(row[0]), codeSpans(row[1])
		if len(vars) > 0 && vars[0] == awsSDKRow {
			continue
		}
		t.Run(strings.Join(vars, ","), func(t *testing.T) {
			if len(flags) != 1 || !strings.HasPrefix(flags[0], "--") {
				t.Fatalf("flag cell %q: want one `--flag`", row[1])
			}
			s, ok := byFlag[strings.TrimPrefix(flags[0], "--")]
			if !ok {
				t.Fatalf("docs/configuration.md lists %s, which is no setting", flags[0])
			}
			delete(byFlag, s.Flag)
			if !slices.Equal(vars, s.Env) {
				t.Errorf("docs/configuration.md gives --%s the variables %v, the code %v", s.Flag, vars, s.Env)
			}
			if err := sameDefault(s, row[2]); err != "" {
				t.Errorf("--%s: %s", s.Flag, err)
			}
		})
	}
	for flag, s := range byFlag {
		t.Errorf("the table of docs/configuration.md does not list --%s (%s)", flag, strings.Join(s.Env, ", "))
	}
}

// sameDefault compares the default the table shows, cell, with the
// setting's: "—" for none, "off" for false, a code span for a value, which
// is read as the flag would read it; other words describe a default that
// New derives from other settings (SQLite under the data directory), which
// the setting has as none.
func sameDefault(s Setting, cell string) string {
	shown := s.Value.String()
	spans := codeSpans(cell)
	switch {
	case cell == "—" || cell == "off":
		if want := map[string]string{"—": "", "off": "false"}[cell]; shown != want {
			return "the table shows the default " + cell + ", the code " + shown
		}
	case len(spans) == 1 && cell == "`"+spans[0]+"`":
		if err := s.Value.Set(spans[0]); err != nil {
			return "the table's default does not read: " + err.Error()
		}
		if s.Value.String() != shown {
			return "the table shows the default " + cell + ", the code " + shown
		}
	case shown != "":
		return "the table describes the default as " + cell + ", the code has " + shown
	}
	return ""
}

// backendSettingsRows returns the cells of the rows of the table of the
// backend's settings in docs/configuration.md.
func backendSettingsRows(t *testing.T) [][]string {
	t.Helper()
	data, err := os.ReadFile("../docs/configuration.md")
	if err != nil {
		t.Fatal(err)
	}
	section, ok := strings.CutPrefix(string(data), "# Configuration reference\n")
	_, section, ok2 := strings.Cut(section, "\n**Backend**")
	if !ok || !ok2 {
		t.Fatal("docs/configuration.md has no **Backend** part under its title, # Configuration reference")
	}
	var rows [][]string
	for _, line := range strings.Split(section, "\n")[1:] {
		switch {
		case strings.HasPrefix(line, "|---"):
		case strings.HasPrefix(line, "|"):
			cells := strings.Split(strings.Trim(line, "|"), "|")
			for i := range cells {
				cells[i] = strings.TrimSpace(cells[i])
			}
			rows = append(rows, cells)
		case len(rows) > 0:
			if want := []string{"variable", "flag", "default", "meaning"}; !slices.Equal(rows[0], want) {
				t.Fatalf("the table's header is %q, want %q", rows[0], want)
			}
			return rows[1:]
		}
	}
	t.Fatal("the table of the backend's settings in docs/configuration.md has no end")
	return nil
}

var codeSpan = regexp.MustCompile("`([^`]*)`")

// codeSpans returns the contents of the code spans of a Markdown cell.
func codeSpans(cell string) []string {
	var out []string
	for _, m := range codeSpan.FindAllStringSubmatch(cell, -1) {
		out = append(out, m[1])
	}
	return out
}
