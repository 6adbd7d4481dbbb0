package hdctest

import (
	"crypto/sha256"
	"encoding/hex"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"testing"
)

// ToolCacheEnv names the directory the tools of modules of their own are
// kept in across runs; by default hdc-tests under the user's cache
// directory ($XDG_CACHE_HOME, ~/.cache), outside the clone.
const ToolCacheEnv = "HDC_TOOL_CACHE"

// cachedTool returns the path of the tool name, a module of its own under
// tests/ (its go.mod pins what it builds, promtool's version among them),
// kept by the digest of its module's files, its build tags and the Go
// toolchain: a warm machine builds it once, not on every run, and a change
// of its module or of Go builds it again.
func cachedTool(t testing.TB, name string) string {
	t.Helper()
	dir, err := toolCacheDir()
	if err != nil {
		t.Fatalf("the tools' cache: %v", err)
	}
	digest, err := toolDigest(name)
	if err != nil {
		t.Fatalf("the digest of %s's module: %v", name, err)
	}
	entry := name + "-" + digest
	b, _ := builds.LoadOrStore("cache/"+entry, &buildOnce{})
	bo := b.(*buildOnce)
	path := filepath.Join(dir, entry)
	bo.once.Do(func() { bo.err = buildLocked(path, func(dst string) error { return buildTool(name, dst) }) })
	if bo.err != nil {
		t.Fatal(bo.err)
	}
	return path
}

// toolCacheDir returns ToolCacheEnv's directory, or the default one,
// made if missing.
func toolCacheDir() (string, error) {
	dir := os.Getenv(ToolCacheEnv)
	if dir == "" {
		base, err := os.UserCacheDir()
		if err != nil {
			return "", err
		}
		dir = filepath.Join(base, "hdc-tests", "tools")
	}
	return dir, os.MkdirAll(dir, 0o755)
}

// toolDigest is the first 16 hex digits of the SHA-256 of what the tool
// name is built from: its package and tags, the Go toolchain, and every
// file of its module's directory (go.mod, go.sum, its sources).
func toolDigest(name string) (string, error) {
	tool := tools[name]
	h := sha256.New()
	h.Write([]byte(tool.pkg + "\x00" + tool.tags + "\x00" + runtime.Version() + "\x00"))
	root := filepath.Join(RepoRoot, filepath.FromSlash(tool.module))
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, path)
		h.Write([]byte(filepath.ToSlash(rel) + "\x00"))
		h.Write(b)
		return nil
	})
	return hex.EncodeToString(h.Sum(nil))[:16], err
}
