package testkit

import (
	"net"
	"strconv"
	"testing"
)

// TestFreeAddrReserves: a port FreeAddr hands out stays reserved for the
// test, so that no other FreeAddr, in this process or another, draws it
// before the program binds it; the reservation ends at cleanup.
func TestFreeAddrReserves(t *testing.T) {
	var port int
	t.Run("reserved", func(t *testing.T) {
		_, p, err := net.SplitHostPort(FreeAddr(t))
		if err != nil {
			t.Fatal(err)
		}
		port, _ = strconv.Atoi(p)
		if _, ok := reservePort(port); ok {
			t.Fatalf("port %d could be reserved again while the test holds it", port)
		}
	})
	release, ok := reservePort(port)
	if !ok {
		t.Fatalf("port %d is still reserved after the test that held it ended", port)
	}
	release()
}
