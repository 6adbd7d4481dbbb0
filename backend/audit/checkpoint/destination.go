package checkpoint

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"

	"go.uber.org/zap"
	"gocloud.dev/blob"
	_ "gocloud.dev/blob/fileblob" // file:///dir
	_ "gocloud.dev/blob/s3blob"   // s3://bucket

	"github.com/health-data-connect/hdc/backend/internal/s3url"
	"github.com/health-data-connect/hdc/internal/redact"
)

// Log names the destination that writes each checkpoint as a log line.
const Log = "log"

// objectPrefix starts the key of every checkpoint object; the rest is its
// time, in a fixed-width form that sorts as the time does, and its replica.
const objectPrefix = "audit-checkpoint-"

// objectTime is the time in an object's key.
const objectTime = "20060102T150405.000000000Z"

// Destination is where checkpoints are written.
type Destination interface {
	// Write stores c.
	Write(ctx context.Context, c Checkpoint) error
	// Close releases the destination.
	Close() error
}

// Open opens the destination url names: Log, or a bucket's URL. An s3://
// URL names its service as the blob store's URL does (package s3url):
// endpoint, region and path_style, or gocloud.dev's use_path_style or
// s3ForcePathStyle; its other parameters are gocloud.dev's s3blob's.
func Open(ctx context.Context, url string, log *zap.Logger) (Destination, error) {
	if url == Log {
		return logDestination{log}, nil
	}
	b, err := openBucket(ctx, url)
	if err != nil {
		return nil, err
	}
	return bucket{b}, nil
}

// Describe returns what the destination url names, as the start-up log
// says it: Log, or the bucket without credentials (s3url.Describe).
func Describe(url string) string {
	if url == Log {
		return Log
	}
	return s3url.Describe(url)
}

// openBucket opens the bucket url names. Its errors quote the URL without
// its password and query: gocloud.dev's quote it whole.
func openBucket(ctx context.Context, url string) (*blob.Bucket, error) {
	url, err := s3url.Gocloud(url)
	if err != nil {
		return nil, err
	}
	b, err := blob.OpenBucket(ctx, url)
	if err != nil {
		return nil, redact.Error(err, url)
	}
	return b, nil
}

// logDestination writes each checkpoint as one line of the log.
type logDestination struct{ log *zap.Logger }

func (d logDestination) Write(_ context.Context, c Checkpoint) error {
	b, err := json.Marshal(c)
	if err != nil {
		return err
	}
	d.log.Info("audit checkpoint", zap.String("checkpoint", string(b)))
	return nil
}

func (logDestination) Close() error { return nil }

// bucket writes each checkpoint as an object of its own, never replacing
// one: a bucket with object lock (S3) keeps them as written.
type bucket struct{ b *blob.Bucket }

func (d bucket) Write(ctx context.Context, c Checkpoint) error {
	body, err := json.Marshal(c)
	if err != nil {
		return err
	}
	key := objectPrefix + c.At.UTC().Format(objectTime) + "-" + c.Replica + ".json"
	return d.b.WriteAll(ctx, key, body, &blob.WriterOptions{ContentType: "application/json"})
}

func (d bucket) Close() error { return d.b.Close() }

// ErrNone is returned by Latest for a bucket that holds no checkpoint.
var ErrNone = errors.New("checkpoint: the bucket holds no checkpoint")

// Latest returns the newest checkpoint in the bucket url names, its
// signature verified with key.
func Latest(ctx context.Context, url string, key []byte) (Checkpoint, error) {
	if url == Log {
		return Checkpoint{}, errors.New("checkpoint: checkpoints written to the log are read from the log, not here")
	}
	b, err := openBucket(ctx, url)
	if err != nil {
		return Checkpoint{}, err
	}
	defer b.Close()
	newest := ""
	it := b.List(&blob.ListOptions{Prefix: objectPrefix})
	for {
		obj, err := it.Next(ctx)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return Checkpoint{}, err
		}
		if strings.HasSuffix(obj.Key, ".json") && obj.Key > newest {
			newest = obj.Key
		}
	}
	if newest == "" {
		return Checkpoint{}, ErrNone
	}
	body, err := b.ReadAll(ctx, newest)
	if err != nil {
		return Checkpoint{}, err
	}
	c, err := Parse(body, key)
	if err != nil {
		return Checkpoint{}, fmt.Errorf("%s: %w", newest, err)
	}
	return c, nil
}
