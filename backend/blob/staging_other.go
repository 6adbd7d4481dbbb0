//go:build !unix

package blob

import "os"

// lockStaged does nothing off Unix, where the backend is not run.
func lockStaged(*os.File) error { return nil }

// abandoned reports false off Unix: without locks a live writer's file
// cannot be told from a dead one's, so none is swept.
func abandoned(string) bool { return false }
