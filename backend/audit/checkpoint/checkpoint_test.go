package checkpoint

import (
	"context"
	"encoding/json"
	"errors"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"go.uber.org/zap"

	"github.com/health-data-connect/hdc/backend/audit"
	"github.com/health-data-connect/hdc/backend/blob/blobtest"
)

var (
	key   = []byte("the checkpoints' key, from the data key")
	t0    = time.Date(2026, 11, 25, 12, 0, 0, 0, time.UTC)
	heads = []audit.Head{
		{Workspace: "", Last: audit.Link{Seq: 3, Hash: audit.Hash{1}}},
		{Workspace: "w1", Last: audit.Link{Seq: 7, Hash: audit.Hash{2}}},
	}
	// timedHeads are heads with their last records' times, as the job
	// reads them; the installation's trail's is not known.
	timedHeads = []Head{{Head: heads[0]}, {Head: heads[1], At: t0.Add(-time.Hour)}}
)

func TestParse(t *testing.T) {
	good := New(timedHeads, t0, "r1", key)
	body := mustJSON(t, good)
	tests := []struct {
		name string
		body string
		key  []byte
		want error
	}{
		{"as written", body, key, nil},
		{"another key", body, []byte("a key the database's writer made up"), ErrSignature},
		{"a trail's seq moved back", strings.Replace(body, `"seq":7`, `"seq":6`, 1), key, ErrSignature},
		{"a trail removed", strings.Replace(body, `{"workspace":"w1"`, `{"workspace":"w2"`, 1), key, ErrSignature},
		{"a record's time moved", strings.Replace(body, `"at":"2026-11-25T11:00:00Z"`, `"at":"2026-11-25T11:00:01Z"`, 1), key, ErrSignature},
		{"no MAC", strings.Replace(body, good.MAC, "", 1), key, ErrSignature},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := Parse([]byte(tt.body), tt.key)
			if !errors.Is(err, tt.want) {
				t.Fatalf("Parse: %v, want %v", err, tt.want)
			}
			if err == nil {
				seen, err := c.Seen()
				if err != nil || seen["w1"] != (Seen{heads[1].Last, t0.Add(-time.Hour)}) || seen[""] != (Seen{Link: heads[0].Last}) {
					t.Fatalf("Seen = %v, %v", seen, err)
				}
			}
		})
	}
	if _, err := Parse([]byte(`{"v":2}`), key); err == nil || errors.Is(err, ErrSignature) {
		t.Fatalf("another format: %v", err)
	}
}

func TestBucketKeepsEveryCheckpointAndLatestReadsTheNewest(t *testing.T) {
	url := "file://" + filepath.ToSlash(t.TempDir())
	ctx := context.Background()
	if _, err := Latest(ctx, url, key); !errors.Is(err, ErrNone) {
		t.Fatalf("an empty bucket: %v", err)
	}
	d, err := Open(ctx, url, zap.NewNop())
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	for i, at := range []time.Time{t0.Add(time.Minute), t0, t0.Add(2 * time.Minute)} {
		hs := append([]Head(nil), timedHeads...)
		hs[1].Last.Seq += int64(i)
		if err := d.Write(ctx, New(hs, at, "r1", key)); err != nil {
			t.Fatal(err)
		}
	}
	c, err := Latest(ctx, url, key)
	if err != nil || !c.At.Equal(t0.Add(2*time.Minute)) || c.Trails[1].Seq != 9 {
		t.Fatalf("Latest = %+v, %v; want the one of %v", c, err, t0.Add(2*time.Minute))
	}
	if _, err := Latest(ctx, url, []byte("another key")); !errors.Is(err, ErrSignature) {
		t.Fatalf("Latest with another key: %v", err)
	}
}

// TestS3URLs: a bucket of an S3-compatible service, on loopback, is named
// as the blob store's URL names one (endpoint, region, path_style) and as
// gocloud.dev's s3blob names one (use_path_style, s3ForcePathStyle), which
// checkpoint URLs took before; a checkpoint written through each URL is
// read back through it.
func TestS3URLs(t *testing.T) {
	t.Parallel()
	tests := []struct{ name, query string }{
		{"the blob URL's spelling", "path_style=true"},
		{"gocloud.dev's spelling", "use_path_style=true"},
		{"gocloud.dev's older spelling", "s3ForcePathStyle=true"},
		{"two spellings that agree", "path_style=true&use_path_style=true"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			endpoint, _ := blobtest.S3Server(t, "audit")
			// The service takes any request; anonymous spares the test
			// credentials in the environment, which t.Parallel forbids.
			url := "s3://audit?endpoint=" + blobtest.ByName(endpoint) + "&region=us-east-1&anonymous=true&" + tt.query
			d, err := Open(t.Context(), url, zap.NewNop())
			if err != nil {
				t.Fatal(err)
			}
			defer d.Close()
			if err := d.Write(t.Context(), New(timedHeads, t0, "r1", key)); err != nil {
				t.Fatal(err)
			}
			if c, err := Latest(t.Context(), url, key); err != nil || !c.At.Equal(t0) {
				t.Fatalf("Latest = %+v, %v; want the checkpoint of %v", c, err, t0)
			}
		})
	}
}

// TestS3URLRefusals: a bucket URL whose service parameters make no sense
// is refused when it is opened, not when the first checkpoint fails, and
// the refusal quotes no credential.
func TestS3URLRefusals(t *testing.T) {
	t.Parallel()
	tests := []struct{ name, url, want string }{
		{"path_style not a boolean", "s3://audit?path_style=maybe", "path_style"},
		{"an endpoint that is not HTTP", "s3://audit?endpoint=ftp://hdc:s3cret@127.0.0.1", "endpoint"},
		{"an endpoint without a host", "s3://audit?endpoint=http://", "endpoint"},
		{"two spellings that disagree", "s3://audit?path_style=true&s3ForcePathStyle=false", "s3ForcePathStyle"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			_, openErr := Open(t.Context(), tt.url, zap.NewNop())
			_, latestErr := Latest(t.Context(), tt.url, key)
			for _, err := range []error{openErr, latestErr} {
				if err == nil || strings.Contains(err.Error(), "s3cret") || !strings.Contains(err.Error(), tt.want) {
					t.Errorf("%v; want an error naming %s, without the secret", err, tt.want)
				}
			}
		})
	}
}

// TestBucketErrorsHideCredentials: an error opening the bucket quotes its
// URL without its password and query, which gocloud.dev's quote whole.
func TestBucketErrorsHideCredentials(t *testing.T) {
	t.Parallel()
	tests := []struct{ name, url, want string }{
		{"a directory's option", "file:///nonexistent?token=s3cret", "file:///nonexistent"},
		{"an S3 bucket's credentials", "s3://hdc:s3cret@audit?bogus=s3cret", "s3://hdc:xxxxx@audit"},
		{"a scheme with no driver", "gs://hdc:s3cret@audit", "gs://hdc:xxxxx@audit"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			_, openErr := Open(t.Context(), tt.url, zap.NewNop())
			_, latestErr := Latest(t.Context(), tt.url, key)
			for _, err := range []error{openErr, latestErr} {
				if err == nil || strings.Contains(err.Error(), "s3cret") || !strings.Contains(err.Error(), tt.want) {
					t.Errorf("%v; want an error quoting %q, without the secret", err, tt.want)
				}
			}
		})
	}
}

func TestJobWritesOnlyWhatChanged(t *testing.T) {
	var written []Checkpoint
	h := &fakeHeads{heads: heads, at: map[int64]time.Time{7: t0.Add(-time.Hour), 8: t0}}
	j := &Job{Heads: h, HeadTime: h.headTime, To: destFunc(func(c Checkpoint) { written = append(written, c) }), Key: key, Every: time.Hour,
		Replica: "r1", Now: func() time.Time { return t0 }, Log: zap.NewNop()}
	j.checkpoint(context.Background())
	j.checkpoint(context.Background())
	h.heads = append([]audit.Head(nil), heads...)
	h.heads[1].Last.Seq++
	j.Final(time.Second)
	if len(written) != 2 || written[1].Trails[1].Seq != 8 {
		t.Fatalf("wrote %+v, want two checkpoints, the second after the change", written)
	}
	if at := written[1].Trails[1].At; at == nil || !at.Equal(t0) || written[1].Trails[0].At != nil || h.reads != 3 {
		t.Fatalf("the second checkpoint's trails %+v, after %d reads of a record; want w1's record of %v, read once for each head", written[1].Trails, h.reads, t0)
	}
}

// TestJobLastSuccess: LastSuccess moves with every run that leaves the
// destination holding the current heads, written or unchanged, and not
// with a run that fails.
func TestJobLastSuccess(t *testing.T) {
	now := t0
	h := &fakeHeads{heads: heads, at: map[int64]time.Time{7: t0}}
	to := &failingDest{}
	j := &Job{Heads: h, HeadTime: h.headTime, To: to, Key: key, Every: time.Hour,
		Replica: "r1", Now: func() time.Time { return now }, Log: zap.NewNop()}
	changeHeads := func() {
		h.heads = append([]audit.Head(nil), h.heads...)
		h.heads[1].Last.Seq++
	}
	tests := []struct {
		name   string
		change func()
		fails  error
		want   time.Time
	}{
		{"written", nil, nil, t0},
		{"unchanged", nil, nil, t0.Add(time.Minute)},
		{"changed, the destination failing", changeHeads, errors.New("the bucket does not answer"), t0.Add(time.Minute)},
		{"written again", nil, nil, t0.Add(3 * time.Minute)},
	}
	if got := j.LastSuccess(); !got.IsZero() {
		t.Fatalf("before any run: %v", got)
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			now = t0.Add(time.Duration(i) * time.Minute)
			if tt.change != nil {
				tt.change()
			}
			to.err = tt.fails
			j.checkpoint(context.Background())
			if got := j.LastSuccess(); !got.Equal(tt.want) {
				t.Fatalf("LastSuccess = %v, want %v", got, tt.want)
			}
		})
	}
}

func FuzzParse(f *testing.F) {
	f.Add([]byte(`{"v":1,"at":"2026-11-25T12:00:00Z","replica":"r","trails":[],"mac":""}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		c, err := Parse(b, key)
		if err == nil {
			if _, err := c.Seen(); err != nil && !strings.Contains(err.Error(), "checkpoint:") {
				t.Fatalf("Seen: %v", err)
			}
		}
	})
}

// fakeHeads is a trail whose workspace w1 has records of the times at
// (by seq), and the installation's trail one that does not parse.
type fakeHeads struct {
	heads []audit.Head
	at    map[int64]time.Time
	reads int
}

func (f *fakeHeads) AuditHeads(context.Context) ([]audit.Head, error) { return f.heads, nil }

func (f *fakeHeads) headTime(_ context.Context, h audit.Head) (time.Time, error) {
	f.reads++
	if h.Workspace == "" {
		return time.Time{}, &audit.Break{Seq: h.Last.Seq, Reason: "stored record: not a record's JSON"}
	}
	return f.at[h.Last.Seq], nil
}

// failingDest is a destination that fails with err when it is set.
type failingDest struct{ err error }

func (d *failingDest) Write(context.Context, Checkpoint) error { return d.err }
func (*failingDest) Close() error                              { return nil }

type destFunc func(Checkpoint)

func (d destFunc) Write(_ context.Context, c Checkpoint) error { d(c); return nil }
func (destFunc) Close() error                                  { return nil }

func mustJSON(t *testing.T, c Checkpoint) string {
	t.Helper()
	b, err := json.Marshal(c)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
