package hdctest

import (
	"os"
	"testing"
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
