package ratelimit

import (
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"os"
	"strings"

	"github.com/redis/go-redis/v9"
)

// RedisConfig is how an edge reaches the Redis its fleet counts in. Who
// reaches that Redis decides every client's allowance (one SET pins a
// client at 429 on every edge, FLUSHALL hands every client a new day), so
// the Redis has an ACL user with a password, and the password is kept
// apart from the URL, which configurations and logs show.
type RedisConfig struct {
	// URL is a redis://, rediss:// (TLS) or unix:// URL, which may name
	// the ACL user (redis://hdc-edge@10.0.0.31:6379/0) but never holds a
	// password.
	URL string
	// Password is the user's password; PasswordFile names a file that
	// holds it instead (its first line). At most one of the two.
	Password     string
	PasswordFile string
	// CAFile is a PEM file of the authorities a rediss:// server's
	// certificate must chain to; empty: the system's.
	CAFile string
	// AllowUnauthenticated lets a Redis on an address other than loopback
	// (or a unix socket) go without a password. Without it, such a Redis
	// is refused.
	AllowUnauthenticated bool
}

// Options checks c and returns the go-redis options it names. No error
// it returns holds the password.
func (c RedisConfig) Options() (*redis.Options, error) {
	opt, err := redis.ParseURL(c.URL)
	if err != nil {
		return nil, errors.New("the URL is not a redis://, rediss:// or unix:// URL") // nor is it quoted: it may hold a password
	}
	if opt.Password != "" {
		return nil, errors.New("the URL holds a password, which every configuration dump and log line that shows the URL would show: " +
			"name the user in the URL (redis://USER@HOST:PORT/DB) and give its password apart")
	}
	if opt.Password, err = c.password(); err != nil {
		return nil, err
	}
	if c.CAFile != "" {
		if opt.TLSConfig == nil {
			return nil, errors.New("a CA file is given for a URL without TLS: use rediss://")
		}
		if opt.TLSConfig.RootCAs, err = readPool(c.CAFile); err != nil {
			return nil, err
		}
	}
	if opt.Password == "" && !c.AllowUnauthenticated && !onThisHost(opt) {
		return nil, fmt.Errorf("the Redis at %s has no password, and whoever reaches it controls every client's allowance: "+
			"give it an ACL user (in the URL) and its password, or allow a Redis without one explicitly", opt.Addr)
	}
	return opt, nil
}

// password returns the password given, or read from the file given.
func (c RedisConfig) password() (string, error) {
	switch {
	case c.PasswordFile == "":
		return c.Password, nil
	case c.Password != "":
		return "", errors.New("both a password and a password file are given: give one")
	}
	b, err := os.ReadFile(c.PasswordFile)
	if err != nil {
		return "", fmt.Errorf("the password file: %w", err)
	}
	line, _, _ := strings.Cut(string(b), "\n")
	if line = strings.TrimSuffix(line, "\r"); line == "" {
		return "", fmt.Errorf("the password file %s is empty", c.PasswordFile)
	}
	return line, nil
}

// readPool reads the PEM certificates of file into a pool.
func readPool(file string) (*x509.CertPool, error) {
	pem, err := os.ReadFile(file)
	if err != nil {
		return nil, fmt.Errorf("the CA file: %w", err)
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(pem) {
		return nil, fmt.Errorf("the CA file %s holds no PEM certificate", file)
	}
	return pool, nil
}

// onThisHost reports whether opt reaches Redis on a unix socket or a
// loopback address, which no other host reaches.
func onThisHost(opt *redis.Options) bool {
	if opt.Network == "unix" {
		return true
	}
	host, _, err := net.SplitHostPort(opt.Addr)
	if err != nil {
		return false
	}
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}
