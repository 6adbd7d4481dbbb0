package storage

import (
	"context"
	"fmt"
	"net/url"
	"path/filepath"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"

	"github.com/health-data-connect/hdc/backend/blob"
	"github.com/health-data-connect/hdc/backend/internal/s3url"
	"github.com/health-data-connect/hdc/internal/redact"
)

// OpenBlobs opens the blob store a blob URL names:
//
//   - empty: the directory dataDir/blobs;
//   - a path, or file:<path>: that directory;
//   - s3://<bucket>[/<prefix>][?endpoint=…&region=…&path_style=true]: an S3
//     bucket, or a bucket of an S3-compatible service. Credentials, region
//     and endpoint come from the AWS configuration loadAWS gives (LoadAWS:
//     environment, shared files, instance role; AWS_ENDPOINT_URL_S3 names
//     another service), which it calls only for an S3 bucket; region and
//     endpoint in the URL override it, and path_style addresses the
//     bucket in the path, as most S3-compatible services want. The query
//     is read as the checkpoints' is (package s3url), so gocloud.dev's
//     use_path_style and s3ForcePathStyle mean path_style. Uploads are
//     staged in dataDir/staging before they are sent.
//
// Several replicas share blobs through S3 only.
func OpenBlobs(ctx context.Context, blobURL, dataDir string, loadAWS func(context.Context) (aws.Config, error)) (blob.Store, error) {
	if isS3(blobURL) {
		cfg, err := loadAWS(ctx)
		if err != nil {
			return nil, err
		}
		return openS3(cfg, blobURL, filepath.Join(dataDir, "staging"))
	}
	dir, err := blobDir(blobURL, dataDir)
	if err != nil {
		return nil, err
	}
	return blob.NewDir(dir)
}

// DescribeBlobs returns what the blob URL of an open blob store names, as
// the start-up log says it: the directory, or the bucket and its service
// (s3url.Describe), without credentials.
func DescribeBlobs(blobURL, dataDir string) string {
	if isS3(blobURL) {
		return s3url.Describe(blobURL)
	}
	dir, _ := blobDir(blobURL, dataDir) // the store opened: the URL names a directory
	return dir
}

// isS3 reports whether the blob URL names an S3 bucket.
func isS3(blobURL string) bool {
	scheme, _, _ := strings.Cut(blobURL, ":")
	return strings.EqualFold(scheme, "s3")
}

// blobDir returns the directory a blob URL that is not an S3 bucket's
// names.
func blobDir(blobURL, dataDir string) (string, error) {
	scheme, rest, _ := strings.Cut(blobURL, ":")
	switch {
	case blobURL == "":
		return filepath.Join(dataDir, "blobs"), nil
	case strings.EqualFold(scheme, "file"):
		return strings.TrimPrefix(rest, "//"), nil
	case !strings.Contains(blobURL, "://"):
		return blobURL, nil
	}
	return "", fmt.Errorf("blob URL scheme %q is not supported (use a path or s3://bucket/prefix)", scheme)
}

// openS3 opens the bucket of an s3:// blob URL with the AWS configuration
// cfg, which the URL's service parameters override (package s3url).
func openS3(cfg aws.Config, blobURL, staging string) (blob.Store, error) {
	u, err := url.Parse(blobURL)
	if err != nil || u.Host == "" || u.User != nil {
		return nil, fmt.Errorf("blob URL %q: want s3://bucket/prefix", redact.URL(blobURL))
	}
	service, err := s3url.Parse(u.Query())
	if err != nil {
		return nil, fmt.Errorf("blob URL: %w", err)
	}
	return blob.NewS3(service.Client(cfg), u.Host, strings.Trim(u.Path, "/"), staging)
}
