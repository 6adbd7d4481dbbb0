package e2e

import (
	"context"
	"net"
	"net/http"
	"net/netip"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/health-data-connect/hdc/tests/hdctest"
)

// TestRegistrationRefusesWhatDeliveryWould (third review, finding 5): an
// endpoint whose host is a loopback, private, link-local or metadata host,
// however it is spelled (the inet_aton forms a resolver takes, IDNA and
// fullwidth characters, a trailing dot, the names hosts files and clouds
// give them), is refused at registration with a problem that names the
// rule, and no subscription is made; a public name still registers.
func TestRegistrationRefusesWhatDeliveryWould(t *testing.T) {
	t.Parallel()
	s := hdctest.StartStack(t)
	c := s.NewClient("clinic-hosts")
	tk := s.Login(c, false, "")
	tests := []struct{ endpoint, rule string }{
		{"http://2130706433/", "loopback"},
		{"http://0x7f000001/", "loopback"},
		{"http://0177.0.0.1/", "loopback"},
		{"http://127.1/", "loopback"},
		{"http://0/", "special-purpose"},
		{"http://127。0。0。1/", "loopback"},
		{"http://①②⑦.0.0.1/", "loopback"},
		{"http://localhost.localdomain/", "loopback"},
		{"http://ip6-localhost/", "loopback"},
		{"http://metadata.google.internal/computeMetadata/v1/", "metadata"},
		{"http://169.254.169.254./latest/meta-data/", "link-local"},
		{"http://0xa9.0xfe.0xa9.0xfe/", "link-local"},
		{"http://10.1/", "private"},
		{"http://LOCALHOST./", "loopback"},
		{"http://[::ffff:7f00:1]/", "loopback"},
	}
	for _, tt := range tests {
		t.Run(tt.endpoint, func(t *testing.T) {
			r := s.Send(c, false, "POST", hdctest.SubsPath, []byte(`{"endpoint":"`+tt.endpoint+`"}`), hdctest.Bearer(tk))
			hdctest.ExpectProblem(t, r, http.StatusBadRequest, "endpoint_not_allowed")
			if detail, _ := r.JSON(t)["detail"].(string); !strings.Contains(detail, tt.rule) {
				t.Fatalf("the problem's detail %q does not name the rule (%s)", detail, tt.rule)
			}
		})
	}
	if r := s.Send(c, false, "POST", hdctest.SubsPath, []byte(`{"endpoint":"https://hooks.example.org/hdc"}`), hdctest.Bearer(tk)); r.Status != http.StatusOK {
		t.Fatalf("a public name: %s", r)
	}
	list := s.Send(c, false, "GET", hdctest.SubsPath, nil, hdctest.Bearer(tk))
	if n := strings.Count(string(list.Body), `"endpoint"`); list.Status != http.StatusOK || n != 1 {
		t.Fatalf("%d subscriptions listed, want the public one alone: %s", n, list)
	}
}

// TestRegistrationResolvesNames (the security review: names of the hosts
// file): a host name that resolves, at registration, only to addresses
// delivery would refuse is refused as the address written out would be,
// with a problem that names the rule and not the addresses; with the
// operator's allow-list covering them, it registers.
func TestRegistrationResolvesNames(t *testing.T) {
	t.Parallel()
	name := loopbackHostsName(t)
	t.Logf("the name: %s, of /etc/hosts", name)
	body := []byte(`{"endpoint":"http://` + name + `:9/hook"}`)
	t.Run("refused", func(t *testing.T) {
		t.Parallel()
		s := hdctest.StartStack(t)
		c := s.NewClient("clinic-resolve")
		tk := s.Login(c, false, "")
		r := s.Send(c, false, "POST", hdctest.SubsPath, body, hdctest.Bearer(tk))
		hdctest.ExpectProblem(t, r, http.StatusBadRequest, "endpoint_not_allowed")
		detail, _ := r.JSON(t)["detail"].(string)
		if !strings.Contains(detail, "resolves only to loopback") || strings.Contains(detail, "127.") || strings.Contains(detail, "::1") {
			t.Fatalf("the problem's detail %q does not say the name resolves to loopback alone, or gives the addresses", detail)
		}
		list := s.Send(c, false, "GET", hdctest.SubsPath, nil, hdctest.Bearer(tk))
		if list.Status != http.StatusOK || strings.Contains(string(list.Body), `"endpoint"`) {
			t.Fatalf("a subscription was made: %s", list)
		}
	})
	t.Run("allowed", func(t *testing.T) {
		t.Parallel()
		s := hdctest.StartStack(t, "HDC_WEBHOOK_ALLOW_NETS=127.0.0.0/8,::1/128")
		c := s.NewClient("clinic-resolve")
		tk := s.Login(c, false, "")
		if r := s.Send(c, false, "POST", hdctest.SubsPath, body, hdctest.Bearer(tk)); r.Status != http.StatusOK {
			t.Fatalf("%s with loopback allowed: %s", name, r)
		}
	})
}

// loopbackHostsName returns a name of this machine's hosts file that
// resolves here to loopback addresses alone and whose spelling does not
// give it away (localhost and its kin, which registration knows without
// resolving), such as the machine's own name on many systems. It skips
// the test when the file has none.
func loopbackHostsName(t *testing.T) string {
	hosts, err := os.ReadFile("/etc/hosts")
	if err != nil {
		t.Skipf("no hosts file to take a name from: %v", err)
	}
	for _, line := range strings.Split(string(hosts), "\n") {
		fields := strings.Fields(strings.SplitN(line, "#", 2)[0])
		for _, name := range fields[min(1, len(fields)):] {
			if strings.Contains(name, "localhost") || strings.HasPrefix(name, "ip6-") {
				continue
			}
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			addrs, err := net.DefaultResolver.LookupNetIP(ctx, "ip", name)
			cancel()
			if err == nil && len(addrs) > 0 && !slices.ContainsFunc(addrs, func(a netip.Addr) bool { return !a.IsLoopback() }) {
				return name
			}
		}
	}
	t.Skip("/etc/hosts names no host that resolves to loopback alone, besides localhost and its kin")
	return ""
}
