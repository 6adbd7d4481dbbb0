//go:build !unix

package registryfile

import "errors"

// lockFile is not implemented off Unix: the registry is written only by the
// hdc CLI on the edge's host, which is Linux or another Unix.
func lockFile(string) (func(), error) {
	return nil, errors.ErrUnsupported
}
