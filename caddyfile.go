// Package hdc holds the reference edge configuration, the repository's
// Caddyfile, embedded so that `hdc up` runs the very file the documentation
// describes, from any directory.
package hdc

import _ "embed"

// Caddyfile is the reference edge configuration.
//
//go:embed Caddyfile
var Caddyfile []byte
