package postgres

import (
	"testing"
	"time"

	"github.com/health-data-connect/hdc/backend/store/postgres/pgtest"
	"github.com/health-data-connect/hdc/backend/store/storetest"
)

// TestFleetMigration: version 24 keys fleet_edges by the instance id
// alone, keeping the last reported of an instance's rows. The database
// is put back to version 23's key, with rows of one instance under
// several serials, and opened again.
func TestFleetMigration(t *testing.T) {
	url := pgtest.URL(t)
	s := open(t, url)
	for _, q := range []string{
		`ALTER TABLE fleet_edges DROP CONSTRAINT fleet_edges_pkey, ADD PRIMARY KEY (id, cert_serial)`,
		`DELETE FROM schema_migrations WHERE version = 24`,
	} {
		if _, err := s.pool.Exec(t.Context(), q); err != nil {
			t.Fatal(err)
		}
	}
	for _, r := range storetest.FleetRowsBefore24 {
		contact := storetest.At(time.Duration(r[4].(int)) * time.Second)
		if _, err := s.pool.Exec(t.Context(), `INSERT INTO fleet_edges VALUES ($1, $2, $3, $4, $5, $6)`, r[0], r[1], r[2], r[3], contact, r[5]); err != nil {
			t.Fatal(err)
		}
	}
	storetest.CheckFleetMigrated(t, open(t, url))
}
