package version

import (
	"runtime/debug"
	"testing"
)

func TestFromBuildInfo(t *testing.T) {
	tests := []struct {
		name string
		bi   debug.BuildInfo
		want Info
		line string
	}{
		{"tagged, clean", debug.BuildInfo{GoVersion: "go1.26.8", Main: debug.Module{Version: "v1.2.3"},
			Settings: []debug.BuildSetting{{Key: "vcs.revision", Value: "abc123"}, {Key: "vcs.modified", Value: "false"}}},
			Info{Version: "v1.2.3", Revision: "abc123", Go: "go1.26.8"}, "v1.2.3 (revision abc123, go1.26.8)"},
		{"modified tree", debug.BuildInfo{GoVersion: "go1.26.8", Main: debug.Module{Version: "v0.0.0-20261122-abc123+dirty"},
			Settings: []debug.BuildSetting{{Key: "vcs.revision", Value: "abc123"}, {Key: "vcs.modified", Value: "true"}}},
			Info{Version: "v0.0.0-20261122-abc123+dirty", Revision: "abc123", Modified: true, Go: "go1.26.8"},
			"v0.0.0-20261122-abc123+dirty (revision abc123, modified, go1.26.8)"},
		{"no VCS information", debug.BuildInfo{GoVersion: "go1.26.8"},
			Info{Version: "(devel)", Revision: "unknown", Go: "go1.26.8"}, "(devel) (revision unknown, go1.26.8)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := fromBuildInfo(&tt.bi)
			if got != tt.want || got.String() != tt.line {
				t.Fatalf("got %+v %q, want %+v %q", got, got.String(), tt.want, tt.line)
			}
		})
	}
}
