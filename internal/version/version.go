// Package version reports what a binary was built from: the module's
// version and the VCS revision, as the Go toolchain records them in the
// build information (runtime/debug.ReadBuildInfo).
package version

import (
	"fmt"
	"runtime/debug"
)

// Info describes a build.
type Info struct {
	// Version is the main module's version: a tag, a pseudo-version, or
	// "(devel)" when the toolchain could not derive one.
	Version string `json:"version"`
	// Revision is the VCS commit, "unknown" when the build did not record
	// it (go build -buildvcs=false, or outside a repository).
	Revision string `json:"revision"`
	// Modified reports uncommitted changes in the built tree.
	Modified bool `json:"modified,omitempty"`
	// Go is the toolchain's version.
	Go string `json:"go"`
}

// Get returns the running binary's build information.
func Get() Info {
	info := Info{Version: "(devel)", Revision: "unknown"}
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return info
	}
	return fromBuildInfo(bi)
}

func fromBuildInfo(bi *debug.BuildInfo) Info {
	info := Info{Version: bi.Main.Version, Revision: "unknown", Go: bi.GoVersion}
	if info.Version == "" {
		info.Version = "(devel)"
	}
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			info.Revision = s.Value
		case "vcs.modified":
			info.Modified = s.Value == "true"
		}
	}
	return info
}

// String is the one line a version command prints.
func (i Info) String() string {
	modified := ""
	if i.Modified {
		modified = ", modified"
	}
	return fmt.Sprintf("%s (revision %s%s, %s)", i.Version, i.Revision, modified, i.Go)
}
