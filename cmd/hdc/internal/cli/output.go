package cli

import (
	"encoding/json"
	"io"
	"os"
)

// PrintJSON writes v as indented JSON followed by a newline.
func PrintJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

// EnvOr returns the environment variable name's value, or def when unset.
// Flags take their defaults from it, so an explicit flag always wins.
func EnvOr(name, def string) string {
	if v, ok := os.LookupEnv(name); ok {
		return v
	}
	return def
}
