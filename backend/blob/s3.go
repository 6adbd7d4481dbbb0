package blob

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"io"
	"os"
	"path"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"
)

// S3 stores blobs as objects of an S3 bucket (or of any S3-compatible
// service): <prefix>/<k[:2]>/<k>, so that every replica serves every blob.
//
// The key of a blob is known only once all of it has been read, so Put
// first streams it to a temporary file (owner-only, in a directory of the
// operator's choice) while hashing it, then uploads that file with its
// length and deletes it: a large upload is never held in memory. An object
// appears whole or not at all, as S3 writes are atomic.
type S3 struct {
	client  *s3.Client
	bucket  string
	prefix  string
	staging string
}

// s3StagedPattern names the files of uploads being staged for S3.
const s3StagedPattern = "hdc-blob-*"

// NewS3 returns an S3 store on bucket, its object names starting with
// prefix (may be empty), staging uploads in the directory staging (created
// owner-only if needed).
func NewS3(client *s3.Client, bucket, prefix, staging string) (*S3, error) {
	if bucket == "" {
		return nil, errors.New("blob: S3 needs a bucket")
	}
	if staging == "" {
		return nil, errors.New("blob: S3 needs a staging directory")
	}
	if err := os.MkdirAll(staging, 0o700); err != nil {
		return nil, err
	}
	return &S3{client: client, bucket: bucket, prefix: prefix, staging: staging}, nil
}

// SweepStaged implements Store: it removes what a process that died while
// staging left in the staging directory. Nothing partial is ever left in
// the bucket: a blob is one PutObject, which S3 writes whole or not at all.
func (s *S3) SweepStaged() (int, error) {
	return sweepStaged(s.staging, s3StagedPattern)
}

// name is the object name of key.
func (s *S3) name(key string) string {
	return path.Join(s.prefix, key[:2], key)
}

// Put implements Store.
func (s *S3) Put(ctx context.Context, r io.Reader) (key string, size int64, err error) {
	tmp, err := stage(s.staging, s3StagedPattern)
	if err != nil {
		return "", 0, err
	}
	defer func() {
		tmp.Close()
		os.Remove(tmp.Name())
	}()
	h := sha256.New()
	if size, err = io.Copy(io.MultiWriter(tmp, h), r); err != nil {
		return "", 0, err
	}
	if err := ctx.Err(); err != nil {
		return "", 0, err
	}
	key = hex.EncodeToString(h.Sum(nil))
	switch exists, err := s.exists(ctx, key); {
	case err != nil:
		return "", 0, err
	case exists:
		return key, size, nil
	}
	if _, err := tmp.Seek(0, io.SeekStart); err != nil {
		return "", 0, err
	}
	_, err = s.client.PutObject(ctx, &s3.PutObjectInput{
		Bucket:        aws.String(s.bucket),
		Key:           aws.String(s.name(key)),
		Body:          tmp,
		ContentLength: aws.Int64(size),
		ContentType:   aws.String("application/octet-stream"),
	})
	if err != nil {
		return "", 0, err
	}
	return key, size, nil
}

// exists reports whether the blob key is stored.
func (s *S3) exists(ctx context.Context, key string) (bool, error) {
	_, err := s.client.HeadObject(ctx, &s3.HeadObjectInput{Bucket: aws.String(s.bucket), Key: aws.String(s.name(key))})
	var nf *types.NotFound
	switch {
	case err == nil:
		return true, nil
	case errors.As(err, &nf):
		return false, nil
	}
	return false, err
}

// Open implements Store. The object streams from S3 as it is read.
func (s *S3) Open(ctx context.Context, key string) (io.ReadCloser, error) {
	if !validKey(key) {
		return nil, ErrNotFound
	}
	out, err := s.client.GetObject(ctx, &s3.GetObjectInput{Bucket: aws.String(s.bucket), Key: aws.String(s.name(key))})
	var nsk *types.NoSuchKey
	if errors.As(err, &nsk) {
		return nil, ErrNotFound
	}
	if err != nil {
		return nil, err
	}
	return out.Body, nil
}

var _ Store = (*S3)(nil)
