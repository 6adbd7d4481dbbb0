package blobtest

import (
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/johannesboyne/gofakes3"
	"github.com/johannesboyne/gofakes3/backend/s3mem"
)

// S3Server serves an S3-compatible service (gofakes3, in memory) on
// loopback until t ends, creates bucket in it, and returns its endpoint
// URL and a client of it. The service accepts any credentials.
func S3Server(t testing.TB, bucket string) (endpoint string, client *s3.Client) {
	t.Helper()
	srv := httptest.NewServer(gofakes3.New(s3mem.New()).Server())
	t.Cleanup(srv.Close)
	client = s3.NewFromConfig(aws.Config{
		Region:      "us-east-1",
		Credentials: credentials.NewStaticCredentialsProvider("test", "test", ""),
	}, func(o *s3.Options) {
		o.BaseEndpoint = aws.String(srv.URL)
		o.UsePathStyle = true
	})
	if _, err := client.CreateBucket(t.Context(), &s3.CreateBucketInput{Bucket: aws.String(bucket)}); err != nil {
		t.Fatal(err)
	}
	return srv.URL, client
}

// ByName returns endpoint, an S3Server's, with the host name localhost for
// its loopback address. The SDK addresses a bucket in the path for an
// endpoint that is an IP address, whatever it is told, so a test of
// path-style addressing needs an endpoint by name.
func ByName(endpoint string) string {
	return strings.Replace(endpoint, "//127.0.0.1:", "//localhost:", 1)
}
