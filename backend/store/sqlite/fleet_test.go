package sqlite

import (
	"path/filepath"
	"testing"
	"time"

	"github.com/health-data-connect/hdc/backend/store/storetest"
)

// TestFleetMigration: version 24 keys fleet_edges by the instance id
// alone, keeping the last reported of an instance's rows. The database
// is put back to version 23's table, with rows of one instance under
// several serials, and opened again.
func TestFleetMigration(t *testing.T) {
	path := filepath.Join(t.TempDir(), "hdc.db")
	s, err := Open(t.Context(), path)
	if err != nil {
		t.Fatal(err)
	}
	for _, q := range []string{
		`DROP TABLE fleet_edges`,
		`CREATE TABLE fleet_edges (id TEXT NOT NULL, cert_serial TEXT NOT NULL, cert_name TEXT NOT NULL, applied_seq BIGINT NOT NULL,
			last_contact BIGINT NOT NULL, source TEXT NOT NULL, PRIMARY KEY (id, cert_serial)) WITHOUT ROWID`,
		`DELETE FROM schema_migrations WHERE version = 24`,
	} {
		if _, err := s.db.Exec(q); err != nil {
			t.Fatal(err)
		}
	}
	for _, r := range storetest.FleetRowsBefore24 {
		contact := micros(storetest.At(time.Duration(r[4].(int)) * time.Second))
		if _, err := s.db.Exec(`INSERT INTO fleet_edges VALUES (?, ?, ?, ?, ?, ?)`, r[0], r[1], r[2], r[3], contact, r[5]); err != nil {
			t.Fatal(err)
		}
	}
	s.Close()
	s, err = Open(t.Context(), path)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	storetest.CheckFleetMigrated(t, s)
}
