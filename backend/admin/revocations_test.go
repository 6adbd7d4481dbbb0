package admin

import (
	"crypto/x509"
	"encoding/pem"
	"os"
	"path/filepath"
	"testing"

	"github.com/health-data-connect/hdc/backend/admin/adminapi"
	"github.com/health-data-connect/hdc/backend/audit"
	"github.com/health-data-connect/hdc/backend/store"
)

// serialOf returns the serial of the certificate file name of dir, as
// openssl x509 -serial prints it.
func serialOf(t *testing.T, dir, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, name+".pem"))
	if err != nil {
		t.Fatal(err)
	}
	block, _ := pem.Decode(b)
	cert, err := x509.ParseCertificate(block.Bytes)
	if err != nil {
		t.Fatal(err)
	}
	return "serial=" + cert.SerialNumber.Text(16)
}

// TestRevocation: an operator revokes the auditor's certificate, which is
// then refused on every route (here at once: the revocation was made on
// this backend), and the revocation is recorded with her name; she cannot
// revoke her own; the auditor cannot revoke.
func TestRevocation(t *testing.T) {
	t.Parallel()
	a := newAPI(t)
	bobs := serialOf(t, a.hop, bob)
	if r := a.do("auditor", "POST", "/admin/v1/revocations", map[string]string{"serial": serialOf(t, a.hop, alice)}); r.status != 403 {
		t.Fatalf("the auditor revoked: %d %s", r.status, r.body)
	}
	if r := a.do("operator", "POST", "/admin/v1/revocations", map[string]string{"serial": serialOf(t, a.hop, alice)}); r.status != 409 {
		t.Fatalf("the operator revoked her own certificate: %d %s", r.status, r.body)
	}
	var rev adminapi.Revocation
	a.do("operator", "POST", "/admin/v1/revocations", map[string]string{"serial": bobs, "name": bob, "role": "auditor"}).decode(t, 201, &rev)
	if want, _ := Serial(bobs); rev.Serial != want || rev.RevokedBy != alice || rev.Name != bob {
		t.Fatalf("the revocation: %+v", rev)
	}
	if r := a.do("auditor", "GET", "/admin/v1/whoami", nil); r.status != 403 || r.problemCode() != "forbidden" {
		t.Fatalf("the revoked certificate: %d %s", r.status, r.body)
	}
	var list adminapi.Page[adminapi.Revocation]
	a.do("operator", "GET", "/admin/v1/revocations", nil).decode(t, 200, &list)
	if len(list.Items) != 1 || list.Items[0].Serial != rev.Serial {
		t.Fatalf("the deny-list: %+v", list)
	}
	rs, err := a.st.ListAudit(t.Context(), store.AuditFilter{Agent: alice})
	if err != nil || len(rs) != 1 || rs[0].Action != audit.CertificateRevoke || rs[0].Entity.ID != rev.Serial {
		t.Fatalf("the installation's records by alice: %+v, %v", rs, err)
	}
}

func TestSerial(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in, want string
		ok       bool
	}{
		{"0a1b", "a1b", true},
		{"serial=0A1B", "a1b", true},
		{"0a:1b", "a1b", true},
		{"0x0a1b", "a1b", true},
		{"", "", false},
		{"0", "", false},
		{"xyz", "", false},
		{"-1", "", false},
		{"a b", "", false},
		{"1" + string(make([]byte, 40)), "", false},
		{"123456789012345678901234567890123456789012", "", false},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			got, ok := Serial(tt.in)
			if ok != tt.ok || ok && got != tt.want {
				t.Fatalf("Serial(%q) = %q, %v; want %q, %v", tt.in, got, ok, tt.want, tt.ok)
			}
		})
	}
}
