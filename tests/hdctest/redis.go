package hdctest

import (
	"bytes"
	"context"
	"crypto/x509"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// The Redis the fleet tests count rate limits in (scripts/redis.sh), as
// the documented setup has it: an ACL user named in its rediss:// URL, the
// user's password in a file, the authority of its TLS; and the variable
// that makes a test fail, not skip, without it (as in CI).
const (
	RedisURLEnv          = "HDC_TEST_REDIS_URL"
	RedisPasswordFileEnv = "HDC_TEST_REDIS_PASSWORD_FILE"
	RedisCAEnv           = "HDC_TEST_REDIS_CA"
	RedisRequireEnv      = "HDC_REQUIRE_REDIS"
)

// RedisConn is how an edge reaches a Redis: its URL, which names the ACL
// user, the file of the user's password and the authority of its TLS.
type RedisConn struct {
	URL, PasswordFile, CA string
}

// testRedis is the test Redis that HDC_TEST_REDIS_URL and its companions
// name; its URL is empty when there is none.
func testRedis() RedisConn {
	return RedisConn{URL: os.Getenv(RedisURLEnv), PasswordFile: os.Getenv(RedisPasswordFileEnv), CA: os.Getenv(RedisCAEnv)}
}

// RedisEnv returns the environment of an edge counting in the test Redis,
// or skips t (fails it when HDC_REQUIRE_REDIS=1). Every edge a stack
// starts counts in it.
func RedisEnv(t testing.TB) []string {
	t.Helper()
	if testRedis().URL == "" {
		if os.Getenv(RedisRequireEnv) == "1" {
			t.Fatalf("%s=1 but %s is not set (eval \"$(bash scripts/redis.sh start DIR)\")", RedisRequireEnv, RedisURLEnv)
		}
		t.Skipf("%s is not set (eval \"$(bash scripts/redis.sh start DIR)\")", RedisURLEnv)
	}
	return testRedis().EdgeEnv()
}

// SharedRedisEnv is the environment of an edge of s counting in the test
// Redis, when there is one (empty values otherwise: in memory). The user's
// password is noted as a credential that no log of s may carry.
func (s *Stack) SharedRedisEnv() []string {
	s.T.Helper()
	r := testRedis()
	s.Creds.Add("the rate limits' Redis password", r.Password(s.T))
	return r.EdgeEnv()
}

// EdgeEnv is the environment of an edge counting in r, as the reference
// Caddyfile reads it.
func (r RedisConn) EdgeEnv() []string {
	return []string{"HDC_RATELIMIT_REDIS=" + r.URL, "HDC_RATELIMIT_REDIS_PASSWORD_FILE=" + r.PasswordFile, "HDC_RATELIMIT_REDIS_CA=" + r.CA}
}

// Password returns the user's password, "" when r has none.
func (r RedisConn) Password(t testing.TB) string {
	t.Helper()
	if r.PasswordFile == "" {
		return ""
	}
	b, err := os.ReadFile(r.PasswordFile)
	if err != nil {
		t.Fatal(err)
	}
	return strings.TrimSpace(string(b))
}

// Client returns a client of r as the user (none when r has no password
// file), closed when t ends.
func (r RedisConn) Client(t testing.TB) *redis.Client {
	t.Helper()
	opt, err := redis.ParseURL(r.URL)
	if err != nil {
		t.Fatal(err)
	}
	opt.Password = r.Password(t)
	if r.CA != "" && opt.TLSConfig != nil {
		pem, err := os.ReadFile(r.CA)
		if err != nil {
			t.Fatal(err)
		}
		opt.TLSConfig.RootCAs = x509.NewCertPool()
		opt.TLSConfig.RootCAs.AppendCertsFromPEM(pem)
	}
	c := redis.NewClient(opt)
	t.Cleanup(func() { c.Close() })
	return c
}

// RedisServer is a Redis of a test's own, made by scripts/redis.sh as the
// test Redis is, which the test may kill and start again on the same port
// (the fleet's Redis going away and coming back).
type RedisServer struct {
	RedisConn
	t   testing.TB
	dir string
}

// StartRedis starts a Redis of t's own on a free loopback port with
// scripts/redis.sh; it skips t when there is no test Redis, as RedisEnv
// does. It is stopped when t ends.
func StartRedis(t testing.TB) *RedisServer {
	t.Helper()
	RedisEnv(t) // the same condition as the shared one's
	r := &RedisServer{t: t, dir: filepath.Join(t.TempDir(), "redis")}
	out, err := exec.Command("bash", filepath.Join(RepoRoot, "scripts", "redis.sh"), "start", r.dir).Output()
	if err != nil {
		t.Fatalf("scripts/redis.sh start: %v", err)
	}
	t.Cleanup(func() { _ = exec.Command("bash", filepath.Join(RepoRoot, "scripts", "redis.sh"), "stop", r.dir).Run() })
	for line := range strings.Lines(string(out)) {
		name, value, _ := strings.Cut(strings.TrimSpace(strings.TrimPrefix(line, "export ")), "=")
		value = strings.Trim(value, "'")
		switch name {
		case RedisURLEnv:
			r.URL = value
		case RedisPasswordFileEnv:
			r.PasswordFile = value
		case RedisCAEnv:
			r.CA = value
		}
	}
	if r.URL == "" {
		t.Fatalf("scripts/redis.sh start printed no URL: %q", out)
	}
	return r
}

// Start starts the server again, on its port, from the configuration
// scripts/redis.sh wrote, and waits until it takes connections.
func (r *RedisServer) Start() {
	r.t.Helper()
	if out, err := exec.Command("redis-server", filepath.Join(r.dir, "redis.conf")).CombinedOutput(); err != nil {
		r.t.Fatalf("redis-server: %v\n%s", err, out)
	}
	addr := r.URL[strings.LastIndex(r.URL, "@")+1:]
	addr = addr[:strings.Index(addr, "/")]
	deadline := time.Now().Add(10 * time.Second)
	for {
		c, err := net.DialTimeout("tcp", addr, time.Second)
		if err == nil {
			c.Close()
			return
		}
		if time.Now().After(deadline) {
			r.t.Fatalf("redis-server on %s does not answer: %v", addr, err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// Stop kills the server (as a crash would) and waits for it to end.
func (r *RedisServer) Stop() {
	r.t.Helper()
	b, err := os.ReadFile(filepath.Join(r.dir, "redis.pid"))
	if err != nil {
		r.t.Fatal(err)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil {
		r.t.Fatal(err)
	}
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		r.t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	for alive(pid) {
		select {
		case <-ctx.Done():
			r.t.Fatalf("redis-server %d still runs 10 s after it was killed", pid)
		case <-time.After(10 * time.Millisecond):
		}
	}
}

// alive reports whether the process pid runs: it exists and is no zombie
// (the server is a daemon, whose parent is not this process).
func alive(pid int) bool {
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false
	}
	i := bytes.LastIndexByte(stat, ')') // the state follows the command's name
	return i > 0 && i+2 < len(stat) && stat[i+2] != 'Z'
}
