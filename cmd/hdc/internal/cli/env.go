package cli

import (
	"os"

	"github.com/spf13/pflag"
)

// EnvStringVar defines on fs a string flag name, as fs.StringVar does,
// whose value when the flag is not given is the environment variable
// env's, else def; a flag given wins. Its usage ends naming env, and its
// help shows def, never the variable's value: the variables hold
// credentials (a database URL's password, a keeper's key, a client's
// secret), and help goes to terminals' scrollback and CI logs. The
// variable is read when the flag is defined, as pflag reads a default.
func EnvStringVar(fs *pflag.FlagSet, p *string, name, env, def, usage string) {
	fs.StringVar(p, name, def, usage+" (env "+env+")")
	if v, ok := os.LookupEnv(env); ok {
		*p = v // after StringVar, so that the help's default stays def
	}
}
