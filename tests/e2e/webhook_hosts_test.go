package e2e

import (
	"net/http"
	"strings"
	"testing"

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
