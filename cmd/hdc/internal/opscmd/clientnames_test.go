package opscmd

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"github.com/health-data-connect/hdc/backend/admin/adminapi"
)

// TestClientNamesCLI: hdc clients create --name --label, update and list
// --name-prefix --label; hdc audit list names the client of a record (its
// actor, its entity, the client whose key it added) by its name after the
// record's hash; a label that is not one is refused
// before anything is done.
func TestClientNamesCLI(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	out, err := hdc(t, dir, "clients", "create", "--workspace", "acme", "--name", "Clinic 7", "--label", "env=staging")
	if err != nil {
		t.Fatal(err)
	}
	a := decode[adminapi.Credentials](t, out)
	if _, err := hdc(t, dir, "clients", "create", "--workspace", "acme", "--name", "Lab Nine", "--label", "env=prod"); err != nil {
		t.Fatal(err)
	}
	out, err = hdc(t, dir, "clients", "update", "--client", a.ClientID, "--name", "Clinic Seven", "--label", "env=prod",
		"--label", "tier=gold")
	if c := decode[adminapi.Client](t, out); err != nil || c.Name != "Clinic Seven" ||
		!reflect.DeepEqual(c.Labels, map[string]string{"env": "prod", "tier": "gold"}) {
		t.Fatalf("update: %v, %s", err, out)
	}
	if out, err = hdc(t, dir, "clients", "update", "--client", a.ClientID, "--remove-label", "tier"); err != nil ||
		decode[adminapi.Client](t, out).Labels["tier"] != "" {
		t.Fatalf("update --remove-label: %v, %s", err, out)
	}
	for _, f := range []struct {
		args []string
		want []string
	}{
		{[]string{"--name-prefix", "clinic"}, []string{"Clinic Seven"}},
		{[]string{"--label", "env=prod"}, []string{"Clinic Seven", "Lab Nine"}},
		{[]string{"--name-prefix", "LAB", "--label", "env=prod"}, []string{"Lab Nine"}},
		{[]string{"--label", "env=staging"}, nil},
	} {
		out, err = hdc(t, dir, append([]string{"clients", "list"}, f.args...)...)
		var got []string
		for _, c := range decode[[]adminapi.Client](t, out) {
			got = append(got, c.Name)
		}
		if err != nil || !reflect.DeepEqual(got, f.want) {
			t.Fatalf("list %v: %v, %s", f.args, err, out)
		}
	}
	for _, bad := range [][]string{
		{"clients", "create", "--workspace", "acme", "--label", "env"},
		{"clients", "update", "--client", a.ClientID, "--label", "env=a b"},
		{"clients", "update", "--client", a.ClientID, "--label", "env=a", "--label", "env=b"},
		{"clients", "list", "--label", "=x"},
	} {
		if out, err := hdc(t, dir, bad...); err == nil || !strings.Contains(err.Error(), "label") {
			t.Fatalf("%v: %v, %s", bad, err, out)
		}
	}

	out, err = hdc(t, dir, "audit", "list", "--workspace", "acme", "--entity", a.ClientID)
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if err != nil || len(lines) != 3 {
		t.Fatalf("audit list: %v\n%s", err, out)
	}
	var update struct {
		Action  string            `json:"action"`
		Names   map[string]string `json:"names"`
		Changes []struct {
			Field, Before, After string
		} `json:"changes"`
	}
	if err := json.Unmarshal([]byte(lines[1]), &update); err != nil || update.Action != "client_update" ||
		update.Names[a.ClientID] != "Clinic Seven" || len(update.Changes) != 3 || update.Changes[0].Before != "Clinic 7" {
		t.Fatalf("the update's line: %v, %s", err, lines[1])
	}
	if i, j := strings.Index(lines[1], `"hash":`), strings.Index(lines[1], `"names":`); i < 0 || j < i {
		t.Fatalf("the names are not after the hash: %s", lines[1])
	}

	if _, err := hdc(t, dir, "keys", "add", "--client", a.ClientID, "--kid", "k-seven"); err != nil {
		t.Fatal(err)
	}
	out, err = hdc(t, dir, "audit", "list", "--workspace", "acme", "--entity", "k-seven")
	var added struct {
		Action string            `json:"action"`
		Owner  string            `json:"owner"`
		Names  map[string]string `json:"names"`
	}
	if err != nil || json.Unmarshal([]byte(out), &added) != nil || added.Action != "key_add" || added.Owner != a.ClientID ||
		added.Names[a.ClientID] != "Clinic Seven" {
		t.Fatalf("the added key's line: %v, %s", err, out)
	}
}
