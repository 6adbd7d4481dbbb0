package hdctest

import (
	"fmt"
	"net"
	"os"
	"os/exec"
	"strconv"
	"testing"
	"time"
)

// The Redis the fleet tests count rate limits in (scripts/redis.sh): its
// URL, and the variable that makes a test fail, not skip, without it (as
// in CI).
const (
	RedisURLEnv     = "HDC_TEST_REDIS_URL"
	RedisRequireEnv = "HDC_REQUIRE_REDIS"
)

// RedisURL returns the test Redis's URL, or skips t (fails it when
// HDC_REQUIRE_REDIS=1). Every edge a stack starts counts in it.
func RedisURL(t testing.TB) string {
	t.Helper()
	url := os.Getenv(RedisURLEnv)
	if url == "" {
		if os.Getenv(RedisRequireEnv) == "1" {
			t.Fatalf("%s=1 but %s is not set (eval \"$(bash scripts/redis.sh start DIR)\")", RedisRequireEnv, RedisURLEnv)
		}
		t.Skipf("%s is not set (eval \"$(bash scripts/redis.sh start DIR)\")", RedisURLEnv)
	}
	return url
}

// RedisServer is a Redis of a test's own, which it may stop and start
// again on the same port (the fleet's Redis going away and coming back).
type RedisServer struct {
	t    testing.TB
	bin  string
	dir  string
	port int
	cmd  *exec.Cmd
	done chan struct{}
}

// StartRedis starts a Redis of t's own on a free loopback port (Debian's
// redis-server, which scripts/redis.sh installs); it skips t when there is
// none, as RedisURL does.
func StartRedis(t testing.TB) *RedisServer {
	t.Helper()
	RedisURL(t) // the same condition as the shared one's
	bin, err := exec.LookPath("redis-server")
	if err != nil {
		t.Fatalf("redis-server: %v (bash scripts/redis.sh start DIR installs it)", err)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
	r := &RedisServer{t: t, bin: bin, dir: t.TempDir(), port: port}
	r.Start()
	t.Cleanup(r.Stop)
	return r
}

// URL is the server's redis:// URL.
func (r *RedisServer) URL() string { return fmt.Sprintf("redis://127.0.0.1:%d/0", r.port) }

// Start starts the server (again), and waits until it answers.
func (r *RedisServer) Start() {
	r.t.Helper()
	r.cmd = exec.Command(r.bin, "--bind", "127.0.0.1", "--port", strconv.Itoa(r.port), "--dir", r.dir, "--save", "", "--appendonly", "no")
	if err := r.cmd.Start(); err != nil {
		r.t.Fatal(err)
	}
	r.done = make(chan struct{})
	go func(cmd *exec.Cmd, done chan struct{}) { _ = cmd.Wait(); close(done) }(r.cmd, r.done)
	deadline := time.Now().Add(10 * time.Second)
	for {
		c, err := net.DialTimeout("tcp", fmt.Sprintf("127.0.0.1:%d", r.port), time.Second)
		if err == nil {
			c.Close()
			return
		}
		if time.Now().After(deadline) {
			r.t.Fatalf("redis-server on port %d does not answer: %v", r.port, err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// Stop kills the server (as a crash would) and waits for it to end.
func (r *RedisServer) Stop() {
	if r.cmd == nil || r.cmd.Process == nil {
		return
	}
	_ = r.cmd.Process.Kill()
	<-r.done
	r.cmd = nil
}
