package storage

import (
	"bytes"
	"context"
	"io"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"

	"github.com/health-data-connect/hdc/backend/blob"
	"github.com/health-data-connect/hdc/backend/blob/blobtest"
)

func TestOpenBlobs(t *testing.T) {
	dir := t.TempDir()
	t.Setenv("AWS_ACCESS_KEY_ID", "test")
	t.Setenv("AWS_SECRET_ACCESS_KEY", "test")
	t.Setenv("AWS_CONFIG_FILE", filepath.Join(dir, "none"))
	t.Setenv("AWS_SHARED_CREDENTIALS_FILE", filepath.Join(dir, "none"))
	tests := []struct {
		name    string
		url     string
		want    any // the store's type
		wantErr bool
	}{
		{"default directory", "", &blob.Dir{}, false},
		{"plain path", filepath.Join(dir, "other"), &blob.Dir{}, false},
		{"file URL", "file://" + filepath.Join(dir, "third"), &blob.Dir{}, false},
		{"s3 bucket", "s3://bucket", &blob.S3{}, false},
		{"s3 with options", "s3://bucket/hdc/blobs?region=eu-west-1&endpoint=http://127.0.0.1:9000&path_style=true", &blob.S3{}, false},
		{"s3 without bucket", "s3:///prefix", nil, true},
		{"s3 with credentials", "s3://key:secret@bucket/prefix", nil, true},
		{"s3 bad path_style", "s3://bucket?path_style=maybe", nil, true},
		{"s3 non-HTTP endpoint", "s3://bucket?endpoint=ftp://user:secret@x", nil, true},
		{"unknown scheme", "gs://bucket", nil, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := OpenBlobs(t.Context(), tt.url, dir, LoadAWS)
			switch {
			case tt.wantErr && err == nil:
				t.Errorf("OpenBlobs(%q) accepted", tt.url)
			case !tt.wantErr && (err != nil || reflect.TypeOf(got) != reflect.TypeOf(tt.want)):
				t.Errorf("OpenBlobs(%q) = %T, %v; want a %T", tt.url, got, err, tt.want)
			case err != nil && strings.Contains(err.Error(), "secret"):
				t.Errorf("OpenBlobs(%q): %v: the error quotes a credential", tt.url, err)
			}
		})
	}
}

// TestOpenBlobsS3Spellings: a blob URL names a bucket of an S3-compatible
// service, on loopback, with each spelling of path-style addressing that
// checkpoint URLs take too, and a blob stored through it is read back.
func TestOpenBlobsS3Spellings(t *testing.T) {
	t.Parallel()
	loadAWS := func(context.Context) (aws.Config, error) {
		return aws.Config{Region: defaultAWSRegion, Credentials: credentials.NewStaticCredentialsProvider("test", "test", "")}, nil
	}
	for _, pathStyle := range []string{"path_style=true", "use_path_style=true", "s3ForcePathStyle=true"} {
		t.Run(pathStyle, func(t *testing.T) {
			t.Parallel()
			endpoint, _ := blobtest.S3Server(t, "records")
			url := "s3://records/hdc?endpoint=" + blobtest.ByName(endpoint) + "&region=us-east-1&" + pathStyle
			blobs, err := OpenBlobs(t.Context(), url, t.TempDir(), loadAWS)
			if err != nil {
				t.Fatal(err)
			}
			key, _, err := blobs.Put(t.Context(), strings.NewReader("a record"))
			if err != nil {
				t.Fatalf("Put through %s: %v", url, err)
			}
			rc, err := blobs.Open(t.Context(), key)
			if err != nil {
				t.Fatal(err)
			}
			defer rc.Close()
			if got, err := io.ReadAll(rc); err != nil || !bytes.Equal(got, []byte("a record")) {
				t.Fatalf("read back %q, %v", got, err)
			}
		})
	}
}
