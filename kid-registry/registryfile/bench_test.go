package registryfile

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/health-data-connect/hdc/internal/clientkey"
	"github.com/health-data-connect/hdc/internal/testkit"
)

// BenchmarkLoad100k is an edge's start on a registry of 100,000 keys: the
// file read, parsed and validated, plain as earlier versions wrote it and
// sealed, each sealed load with a new sealer as a start has (the data key
// unwrapped, every secret opened). It reports the keeper's calls per load.
func BenchmarkLoad100k(b *testing.B) {
	dir := b.TempDir()
	keys := make([]Entry, 100_000)
	now := time.Now().UTC()
	for i := range keys {
		keys[i] = Entry{Key: clientkey.Key{Kid: fmt.Sprint("k_", i), ClientID: fmt.Sprint("client-", i%1000), Secret: clientkey.NewSecret(), Status: clientkey.Active, CreatedAt: now}}
	}
	k := testkit.Keeper(b)
	sealed := filepath.Join(dir, "sealed.json")
	if err := Update(sealed, NewSealer(k), func(f *File) error { f.Keys = keys; return nil }); err != nil {
		b.Fatal(err)
	}
	plain := filepath.Join(dir, "plain.json")
	f := fileForm{Keys: make([]storedKey, len(keys))}
	for i := range keys {
		f.Keys[i] = storedKey{Listed: keys[i].Listed(), Secret: keys[i].Secret}
	}
	if err := write(plain, f); err != nil {
		b.Fatal(err)
	}
	for _, tc := range []struct {
		name, path string
		sealer     func() *Sealer
	}{
		{"plain", plain, func() *Sealer { return nil }},
		{"sealed", sealed, func() *Sealer { return NewSealer(k) }},
	} {
		b.Run(tc.name, func(b *testing.B) {
			calls := k.Calls()
			for b.Loop() {
				r, err := Load(tc.path, tc.sealer())
				if err != nil || r.Len() != len(keys) {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(k.Calls()-calls)/float64(b.N), "keeper-calls/op")
			if fi, err := os.Stat(tc.path); err == nil {
				b.ReportMetric(float64(fi.Size())/float64(len(keys)), "file-bytes/key")
			}
		})
	}
}
