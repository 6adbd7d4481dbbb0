package blob_test

import (
	"errors"
	"os"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/health-data-connect/hdc/backend/blob"
	"github.com/health-data-connect/hdc/backend/blob/blobtest"
)

// client returns a client of an S3-compatible service that has bucket.
func client(t *testing.T, bucket string) *s3.Client {
	_, c := blobtest.S3Server(t, bucket)
	return c
}

func TestS3Conformance(t *testing.T) {
	blobtest.Run(t, func(t *testing.T) blob.Store {
		s, err := blob.NewS3(client(t, "blobs"), "blobs", "hdc/records", t.TempDir())
		if err != nil {
			t.Fatal(err)
		}
		return s
	})
}

// TestS3Layout checks the object names, and that two stores on one
// bucket (two replicas) see each other's blobs while another prefix is
// another store.
func TestS3Layout(t *testing.T) {
	c := client(t, "shared")
	staging := t.TempDir()
	a, err := blob.NewS3(c, "shared", "hdc", staging)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := blob.NewS3(c, "shared", "hdc", t.TempDir())
	other, _ := blob.NewS3(c, "shared", "elsewhere", t.TempDir())
	key, _, err := a.Put(t.Context(), strings.NewReader("shared content"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.HeadObject(t.Context(), &s3.HeadObjectInput{
		Bucket: aws.String("shared"), Key: aws.String("hdc/" + key[:2] + "/" + key),
	}); err != nil {
		t.Fatalf("object hdc/%s/%s: %v", key[:2], key, err)
	}
	rc, err := b.Open(t.Context(), key)
	if err != nil {
		t.Fatalf("another replica cannot open the blob: %v", err)
	}
	rc.Close()
	if _, err := other.Open(t.Context(), key); !errors.Is(err, blob.ErrNotFound) {
		t.Fatalf("a store with another prefix opened the blob: %v", err)
	}
	if left, _ := os.ReadDir(staging); len(left) != 0 {
		t.Fatalf("staging files left behind: %v", left)
	}
}

func TestNewS3NeedsABucket(t *testing.T) {
	if _, err := blob.NewS3(s3.New(s3.Options{}), "", "", ""); err == nil {
		t.Fatal("NewS3 accepted an empty bucket")
	}
}
