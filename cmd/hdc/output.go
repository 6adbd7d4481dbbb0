package main

import (
	"encoding/json"
	"io"
	"os"
)

// printJSON writes v as indented JSON followed by a newline.
func printJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

// envOr returns the environment variable name's value, or def when unset.
// Flags take their defaults from it, so an explicit flag always wins.
func envOr(name, def string) string {
	if v, ok := os.LookupEnv(name); ok {
		return v
	}
	return def
}
