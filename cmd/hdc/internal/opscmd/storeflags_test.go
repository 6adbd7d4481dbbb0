package opscmd

import (
	"bytes"
	"testing"

	"github.com/health-data-connect/hdc/cmd/hdc/internal/clitest"
)

// TestErrorsHideCredentials: a command that cannot open a URL it is given
// (the database's, a keeper's, the checkpoints' bucket) says so without
// the password, key or query the URL holds, keeping what it names.
func TestErrorsHideCredentials(t *testing.T) {
	t.Parallel()
	const secret = "s3cret"
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"a database that does not answer", []string{"keys", "list", "--db", "postgres://hdc:" + secret + "@127.0.0.1:1/hdc"}, "127.0.0.1:1"},
		{"a database URL that does not parse", []string{"keys", "list", "--db", "postgres://hdc:" + secret + "@127.0.0.1:port/hdc"}, "cannot be parsed"},
		{"a local key that is not one", []string{"keys", "list", "--keeper", "base64key://" + secret}, "32-byte key"},
		{"a KMS key's URL with a password", []string{"keys", "list", "--keeper", "awskms://hdc:" + secret + "@alias/hdc?bogus=" + secret},
			"awskms://hdc:xxxxx@alias/hdc"},
		{"the new keeper's URL with a query", []string{"keeper", "rewrap", "--to", "azurekeyvault://hdc.vault.azure.net/keys/hdc?sig=" + secret},
			"azurekeyvault://hdc.vault.azure.net/keys/hdc"},
		{"the checkpoints' bucket with credentials", []string{"audit", "verify", "--checkpoints", "s3://hdc:" + secret + "@audit?bogus=" + secret},
			"s3://hdc:xxxxx@audit"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			seedAudit(t, dir)
			res := clitest.Run(t, nil, append(tt.args, "--data", dir)...)
			if res.Err == nil || bytes.Contains(res.Stderr, []byte(secret)) || !bytes.Contains(res.Stderr, []byte(tt.want)) {
				t.Errorf("%v: %v\n%s; want an error naming %q, without the secret", tt.args, res.Err, res.Stderr, tt.want)
			}
		})
	}
}
