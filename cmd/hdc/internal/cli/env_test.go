package cli

import (
	"strings"
	"testing"

	"github.com/spf13/pflag"
)

// TestEnvStringVar: the flag given wins, then the variable, set even to
// empty, then the default; help shows the default and names the
// variable, whatever the variable holds.
func TestEnvStringVar(t *testing.T) {
	const env = "HDC_TEST_ENV_STRING_VAR"
	tests := []struct {
		name  string
		value *string // the variable's; nil: unset
		args  []string
		want  string
	}{
		{"unset", nil, nil, "default"},
		{"set", new("postgres://hdc:s3cret@db/hdc"), nil, "postgres://hdc:s3cret@db/hdc"},
		{"set empty", new(""), nil, ""},
		{"given", new("postgres://hdc:s3cret@db/hdc"), []string{"--db", "given"}, "given"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.value != nil {
				t.Setenv(env, *tt.value)
			}
			fs := pflag.NewFlagSet("test", pflag.ContinueOnError)
			var got string
			EnvStringVar(fs, &got, "db", env, "default", "database URL")
			if err := fs.Parse(tt.args); err != nil {
				t.Fatal(err)
			}
			if got != tt.want {
				t.Errorf("--db = %q, want %q", got, tt.want)
			}
			help := fs.FlagUsages()
			if strings.Contains(help, "s3cret") || !strings.Contains(help, `database URL (env `+env+`) (default "default")`) {
				t.Errorf("help:\n%s", help)
			}
		})
	}
}
