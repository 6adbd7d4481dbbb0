//go:build unix

package registryfile

import (
	"os"
	"syscall"
)

// lockFile takes an exclusive advisory lock (flock) on the file at path,
// creating it if needed, and returns the function that releases it. Each call
// opens the file anew, so the lock excludes other goroutines of this process
// as well as other processes.
func lockFile(path string) (unlock func(), err error) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, err
	}
	for {
		err = syscall.Flock(int(f.Fd()), syscall.LOCK_EX)
		if err != syscall.EINTR {
			break
		}
	}
	if err != nil {
		f.Close()
		return nil, err
	}
	return func() {
		_ = syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
		f.Close()
	}, nil
}
