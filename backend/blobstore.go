package backend

import (
	"context"
	"fmt"
	"net/url"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/health-data-connect/hdc/backend/blob"
	"github.com/health-data-connect/hdc/internal/redact"
)

// OpenBlobs opens the blob store a blob URL names:
//
//   - empty: the directory dataDir/blobs;
//   - a path, or file:<path>: that directory;
//   - s3://<bucket>[/<prefix>][?region=…&endpoint=…&path_style=true]: an S3
//     bucket, or a bucket of an S3-compatible service. Credentials, region
//     and endpoint come from the standard AWS configuration (environment,
//     shared files, instance role; AWS_ENDPOINT_URL_S3 names another
//     service); region and endpoint in the URL override it, and path_style
//     addresses the bucket in the path, as most S3-compatible services
//     want. Uploads are staged in dataDir/staging before they are sent.
//
// Several replicas share blobs through S3 only.
func OpenBlobs(ctx context.Context, blobURL, dataDir string) (blob.Store, error) {
	return openBlobs(ctx, blobURL, dataDir, loadAWS)
}

// openBlobs is OpenBlobs with the AWS configuration from loadAWS, which
// it calls only for an S3 bucket.
func openBlobs(ctx context.Context, blobURL, dataDir string, loadAWS func(context.Context) (aws.Config, error)) (blob.Store, error) {
	scheme, rest, _ := strings.Cut(blobURL, ":")
	switch {
	case blobURL == "":
		return blob.NewDir(filepath.Join(dataDir, "blobs"))
	case strings.EqualFold(scheme, "s3"):
		cfg, err := loadAWS(ctx)
		if err != nil {
			return nil, err
		}
		return openS3(cfg, blobURL, filepath.Join(dataDir, "staging"))
	case strings.EqualFold(scheme, "file"):
		return blob.NewDir(strings.TrimPrefix(rest, "//"))
	case !strings.Contains(blobURL, "://"):
		return blob.NewDir(blobURL)
	}
	return nil, fmt.Errorf("blob URL scheme %q is not supported (use a path or s3://bucket/prefix)", scheme)
}

// openS3 opens the bucket of an s3:// blob URL with the AWS configuration
// cfg, which the URL's region and endpoint override.
func openS3(cfg aws.Config, blobURL, staging string) (blob.Store, error) {
	u, err := url.Parse(blobURL)
	if err != nil || u.Host == "" || u.User != nil {
		return nil, fmt.Errorf("blob URL %q: want s3://bucket/prefix", redact.URL(blobURL))
	}
	q := u.Query()
	var pathStyle bool
	if v := q.Get("path_style"); v != "" {
		if pathStyle, err = strconv.ParseBool(v); err != nil {
			return nil, fmt.Errorf("blob URL: path_style=%q is not a boolean", v)
		}
	}
	if endpoint := q.Get("endpoint"); endpoint != "" {
		if e, err := url.Parse(endpoint); err != nil || e.Host == "" || (e.Scheme != "http" && e.Scheme != "https") {
			return nil, fmt.Errorf("blob URL: endpoint=%q is not an http(s) URL", redact.URL(endpoint))
		}
	}
	if region := q.Get("region"); region != "" {
		cfg.Region = region
	}
	client := s3.NewFromConfig(cfg, func(o *s3.Options) {
		if endpoint := q.Get("endpoint"); endpoint != "" {
			o.BaseEndpoint = aws.String(endpoint)
		}
		o.UsePathStyle = pathStyle
	})
	return blob.NewS3(client, u.Host, strings.Trim(u.Path, "/"), staging)
}
