package main

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
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

// printHead prints an answer's status line and headers, then an empty
// line, as curl -i does.
func printHead(w io.Writer, resp *http.Response) {
	fmt.Fprintf(w, "%s %s\r\n", resp.Proto, resp.Status)
	_ = resp.Header.Write(w)
	_, _ = io.WriteString(w, "\r\n")
}
