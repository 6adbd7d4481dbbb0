package upcmd

import (
	"context"
	"io"
	"net"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/health-data-connect/hdc/backend"
)

// reusePort listens on a free loopback port with SO_REUSEPORT, as Caddy
// does, so that only another socket asking for it could share the port.
func reusePort(t *testing.T) net.Listener {
	t.Helper()
	lc := net.ListenConfig{Control: func(_, _ string, c syscall.RawConn) error {
		var serr error
		err := c.Control(func(fd uintptr) {
			serr = unix.SetsockoptInt(int(fd), unix.SOL_SOCKET, unix.SO_REUSEPORT, 1)
		})
		if err != nil {
			return err
		}
		return serr
	}}
	l, err := lc.Listen(context.Background(), "tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	return l
}

// TestUpRefusesBusyEdgeAddresses: an address of the edge in use, even by
// a socket that shares ports as Caddy's do, stops hdc up before it starts
// anything, with one line naming the flag.
func TestUpRefusesBusyEdgeAddresses(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		set  func(o *upOptions, busy string)
		flag string
	}{
		{"API address", func(o *upOptions, busy string) { o.listen = busy }, "--listen"},
		{"metrics address", func(o *upOptions, busy string) { o.metrics = busy }, "--metrics"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			busy := reusePort(t).Addr().String()
			o := upOptions{backend: backend.DefaultConfig(), listen: "127.0.0.1:0", metrics: "127.0.0.1:0", admin: "off", data: filepath.Join(t.TempDir(), "data"), logLevel: "error",
				backendListen: "127.0.0.1:0", internalListen: "127.0.0.1:0", workspace: "demo"}
			tt.set(&o, busy)
			// Were the address taken, the stack would serve until the
			// deadline and return no error.
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			defer cancel()
			err := runUp(ctx, o, io.Discard)
			if err == nil || !strings.Contains(err.Error(), tt.flag+" "+busy+" is not free") || strings.Contains(err.Error(), "\n") {
				t.Fatalf("err = %v, want one line naming %s", err, tt.flag)
			}
			if _, err := os.Stat(o.data); !os.IsNotExist(err) {
				t.Fatalf("the data directory was created before the check: %v", err)
			}
		})
	}
}

// TestAdminAddress: --admin is a unix socket only its owner may open, at
// <data>/edge-admin.sock by default, or off; never a TCP address, which
// every local user could reach.
func TestAdminAddress(t *testing.T) {
	t.Parallel()
	data := "/srv/hdc/data"
	tests := []struct{ flag, want, err string }{
		{"", "unix//srv/hdc/data/edge-admin.sock|0600", ""},
		{"off", "off", ""},
		{"/run/me/admin.sock", "unix//run/me/admin.sock|0600", ""},
		{"127.0.0.1:2019", "", "never on a TCP port"},
		{"localhost:2019", "", "never on a TCP port"},
	}
	for _, tt := range tests {
		t.Run(tt.flag, func(t *testing.T) {
			t.Parallel()
			got, err := adminAddress(tt.flag, data)
			if got != tt.want || (err == nil) != (tt.err == "") || err != nil && !strings.Contains(err.Error(), tt.err) {
				t.Fatalf("adminAddress(%q) = %q, %v; want %q, an error saying %q", tt.flag, got, err, tt.want, tt.err)
			}
		})
	}
	rel, err := adminAddress("admin.sock", data)
	if wd, _ := os.Getwd(); err != nil || rel != "unix/"+filepath.Join(wd, "admin.sock")+"|0600" {
		t.Fatalf("a relative --admin: %q, %v", rel, err)
	}
}
