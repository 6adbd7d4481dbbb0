//go:build unix

package blob

import (
	"os"
	"syscall"
)

// lockStaged takes an exclusive flock on f without waiting; it lasts as
// long as f is open.
func lockStaged(f *os.File) error {
	for {
		err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
		if err != syscall.EINTR {
			return err
		}
	}
}

// abandoned reports whether no process holds the staged file at path.
func abandoned(path string) bool {
	f, err := os.Open(path)
	if err != nil {
		return false
	}
	defer f.Close()
	return lockStaged(f) == nil
}
