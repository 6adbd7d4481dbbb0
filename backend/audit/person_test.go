package audit

import (
	"strings"
	"testing"

	"github.com/health-data-connect/hdc/internal/contract"
)

// TestLocalOperator: the local user's name is made a person's name, each
// character a name may not hold replaced and the name cut to its length,
// and the person is a direct operator, whom a record accepts.
func TestLocalOperator(t *testing.T) {
	t.Parallel()
	tests := []struct{ in, want string }{
		{"alice@host-1", "alice@host-1"},
		{"DOMAIN\\alice@host 1", "DOMAIN_alice@host_1"},
		{"élise@host", "__lise@host"},
		{strings.Repeat("a", 70) + "@h", strings.Repeat("a", 64)},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			got := personName(tt.in)
			if got != tt.want || !contract.ValidPersonName(got) {
				t.Fatalf("personName(%q) = %q, want %q", tt.in, got, tt.want)
			}
		})
	}
	p := LocalOperator()
	if !p.Direct || p.Role != contract.RoleOperator || p.Serial != "" || !strings.Contains(p.Name, "@") || !p.valid([]contract.Role{contract.RoleOperator}) {
		t.Fatalf("LocalOperator() = %+v: want a direct operator named user@host", p)
	}
}
