package blob

import (
	"os"
	"path/filepath"
)

// stage creates a file for a blob being written in dir, its name made from
// pattern as os.CreateTemp makes it, and holds an exclusive lock on it
// until it is closed. The lock is what tells a live writer's file from one
// a crashed process left: the kernel drops it with the process.
func stage(dir, pattern string) (*os.File, error) {
	f, err := os.CreateTemp(dir, pattern)
	if err != nil {
		return nil, err
	}
	if err := lockStaged(f); err != nil {
		f.Close()
		os.Remove(f.Name())
		return nil, err
	}
	return f, nil
}

// sweepStaged removes the files of dir matching pattern that no process
// holds: what a process that died while writing left behind. It returns
// how many it removed. (A file another process created a moment ago and
// has not locked yet could be taken for one; stores share a staging
// directory only by mistake.)
func sweepStaged(dir, pattern string) (int, error) {
	names, err := filepath.Glob(filepath.Join(dir, pattern))
	if err != nil {
		return 0, err
	}
	removed := 0
	for _, name := range names {
		if abandoned(name) && os.Remove(name) == nil {
			removed++
		}
	}
	return removed, nil
}
