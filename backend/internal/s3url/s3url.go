// Package s3url reads the query of the s3:// URLs that name the backend's
// buckets, the blob store's (HDC_BLOB_URL) and the audit checkpoints'
// (HDC_AUDIT_CHECKPOINTS), so that both name an S3-compatible service in
// one spelling: endpoint, region and path_style.
//
// The blob store builds its client from a Service; the checkpoints open
// their bucket with gocloud.dev, whose s3blob reads path-style addressing
// as use_path_style (or s3ForcePathStyle) and refuses path_style, so
// Gocloud spells it that way for them. Both URLs take all three
// spellings, so that neither refuses what it took before.
//
// A URL that names no S3 bucket is none of this package's business:
// Gocloud returns it as it is, and Describe only redacts it.
package s3url

import (
	"fmt"
	"net/url"
	"strconv"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/health-data-connect/hdc/internal/redact"
)

// Service is the S3 service an s3:// URL's query names.
type Service struct {
	// Endpoint is the base URL of an S3-compatible service, http or
	// https; empty for the AWS configuration's (AWS's own, or
	// AWS_ENDPOINT_URL_S3).
	Endpoint string
	// Region overrides the AWS configuration's when it is not empty.
	Region string
	// PathStyle addresses the bucket in the path rather than in the host
	// name, as most S3-compatible services want.
	PathStyle bool
}

// pathStyleKeys are the spellings of path-style addressing: the one the
// docs give, then gocloud.dev's and the older one it still reads.
var pathStyleKeys = []string{"path_style", "use_path_style", "s3ForcePathStyle"}

// gocloudPathStyle is gocloud.dev's spelling of path-style addressing.
const gocloudPathStyle = "use_path_style"

// Parse returns the Service q names. It refuses an endpoint that is not
// an http(s) URL, a path style that is not a boolean, and two spellings
// of it that disagree. Its errors quote no credential.
func Parse(q url.Values) (Service, error) {
	s := Service{Endpoint: q.Get("endpoint"), Region: q.Get("region")}
	if s.Endpoint != "" {
		if e, err := url.Parse(s.Endpoint); err != nil || e.Host == "" || (e.Scheme != "http" && e.Scheme != "https") {
			return Service{}, fmt.Errorf("endpoint=%q is not an http(s) URL", redact.URL(s.Endpoint))
		}
	}
	seen := ""
	for _, key := range pathStyleKeys {
		v := q.Get(key)
		if v == "" {
			continue
		}
		b, err := strconv.ParseBool(v)
		switch {
		case err != nil:
			return Service{}, fmt.Errorf("%s=%q is not a boolean", key, v)
		case seen != "" && b != s.PathStyle:
			return Service{}, fmt.Errorf("%s and %s disagree", seen, key)
		}
		s.PathStyle, seen = b, key
	}
	return s, nil
}

// Client returns a client of the service, with the AWS configuration cfg
// (credentials, retries) under the region the URL names, if any.
func (s Service) Client(cfg aws.Config) *s3.Client {
	if s.Region != "" {
		cfg.Region = s.Region
	}
	return s3.NewFromConfig(cfg, func(o *s3.Options) {
		if s.Endpoint != "" {
			o.BaseEndpoint = aws.String(s.Endpoint)
		}
		o.UsePathStyle = s.PathStyle
	})
}

// Gocloud returns the bucket URL rawURL as gocloud.dev opens it: an
// s3:// URL with the path style in s3blob's one spelling (the endpoint and
// the region it reads under the names they have), any other URL as it is.
// It refuses an s3:// URL whose Service does not parse.
func Gocloud(rawURL string) (string, error) {
	u, err := url.Parse(rawURL)
	if err != nil || !strings.EqualFold(u.Scheme, "s3") {
		return rawURL, nil // gocloud.dev refuses what does not parse
	}
	q := u.Query()
	s, err := Parse(q)
	if err != nil {
		return "", fmt.Errorf("bucket URL %s: %w", redact.URL(rawURL), err)
	}
	for _, key := range pathStyleKeys {
		q.Del(key)
	}
	if s.PathStyle {
		q.Set(gocloudPathStyle, "true")
	}
	u.RawQuery = q.Encode()
	return u.String(), nil
}

// Describe returns what the bucket URL rawURL names, as it may be logged:
// the URL without its password and query (redact.URL) and, when its query
// names one, the service's endpoint, likewise.
func Describe(rawURL string) string {
	where := redact.URL(rawURL)
	u, err := url.Parse(rawURL)
	if err != nil {
		return where
	}
	if e := u.Query().Get("endpoint"); e != "" {
		where += " at " + redact.URL(e)
	}
	return where
}
