package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"os"
	"strconv"
	"time"

	"github.com/johannesboyne/gofakes3"
	"github.com/johannesboyne/gofakes3/backend/s3bolt"
	bolt "go.etcd.io/bbolt"
)

// Credentials are the AWS credentials hdc-s3 prints: it checks none, but
// the SDK signs every request and wants a pair.
const (
	accessKeyID     = "hdc-s3"
	secretAccessKey = "hdc-s3"
)

// region is the region the printed URLs name: hdc-s3 serves any, and the
// SDK wants one.
const region = "us-east-1"

// lockWait is how long opening the buckets' file waits for another
// process that holds it.
const lockWait = time.Second

// shutdownWait is how long a stopping hdc-s3 waits for the requests in
// flight.
const shutdownWait = 10 * time.Second

// store is an open hdc-s3: its buckets' file, its listener and the
// server that will serve it.
type store struct {
	opts     options
	db       *bolt.DB
	ln       net.Listener
	srv      *http.Server
	endpoint string // the base URL the printed environment names
}

// open checks the listening address, opens the buckets' file, creates the
// buckets it lacks and listens. Nothing is served until serve.
func open(o options, errLog io.Writer) (*store, error) {
	addr, err := listenAddr(o.listen, o.allowNetwork)
	if err != nil {
		return nil, err
	}
	for _, b := range []string{o.blobBucket, o.checkpointBucket} {
		if err := gofakes3.ValidateBucketName(b); err != nil {
			return nil, fmt.Errorf("bucket %q: %v", b, err)
		}
	}
	db, err := bolt.Open(o.db, 0o600, &bolt.Options{Timeout: lockWait})
	if errors.Is(err, bolt.ErrTimeout) {
		return nil, fmt.Errorf("--db %s is held by another process (another hdc-s3?)", o.db)
	}
	if err != nil {
		return nil, fmt.Errorf("--db %s: %w", o.db, err)
	}
	backend := s3bolt.New(db)
	for _, b := range []string{o.blobBucket, o.checkpointBucket} {
		if err := createBucket(backend, b); err != nil {
			db.Close()
			return nil, err
		}
	}
	ln, err := net.ListenTCP("tcp", addr)
	if err != nil {
		db.Close()
		return nil, err
	}
	faker := gofakes3.New(backend, gofakes3.WithLogger(gofakes3.StdLog(log.New(errLog, "hdc-s3: ", 0), gofakes3.LogErr)))
	return &store{
		opts:     o,
		db:       db,
		ln:       ln,
		srv:      &http.Server{Handler: faker.Server(), ReadHeaderTimeout: 10 * time.Second},
		endpoint: endpoint(ln.Addr().(*net.TCPAddr)),
	}, nil
}

// listenAddr resolves the --listen address, refusing one that is not
// loopback unless the network is allowed: the store checks no credential.
func listenAddr(listen string, allowNetwork bool) (*net.TCPAddr, error) {
	addr, err := net.ResolveTCPAddr("tcp", listen)
	if err != nil {
		return nil, fmt.Errorf("--listen %s: %w", listen, err)
	}
	if !allowNetwork && (addr.IP == nil || !addr.IP.IsLoopback()) {
		return nil, fmt.Errorf("--listen %s is not a loopback address: hdc-s3 checks no credential, so whoever reaches "+
			"it reads and writes every bucket; give --allow-network to listen there anyway", listen)
	}
	return addr, nil
}

// createBucket creates bucket in b unless it is there.
func createBucket(b gofakes3.Backend, bucket string) error {
	exists, err := b.BucketExists(bucket)
	if err == nil && !exists {
		err = b.CreateBucket(bucket)
	}
	if err != nil {
		return fmt.Errorf("creating the bucket %s: %w", bucket, err)
	}
	return nil
}

// endpoint is the base URL of the store listening at addr: on every
// address, the host's name.
func endpoint(addr *net.TCPAddr) string {
	host := addr.IP.String()
	if addr.IP.IsUnspecified() {
		if name, err := os.Hostname(); err == nil {
			host = name
		}
	}
	return "http://" + net.JoinHostPort(host, strconv.Itoa(addr.Port))
}

// environment is what a backend and the hdc CLI need to use the buckets,
// as shell lines: the credentials, the blob store's URL and the
// checkpoints'.
func (s *store) environment() []string {
	query := "?endpoint=" + s.endpoint + "&path_style=true&region=" + region
	return []string{
		"# hdc-s3 checks no credential: any pair serves, and the AWS SDK signs with one",
		"export AWS_ACCESS_KEY_ID=" + accessKeyID + " AWS_SECRET_ACCESS_KEY=" + secretAccessKey,
		"export HDC_BLOB_URL='s3://" + s.opts.blobBucket + query + "'",
		"export HDC_AUDIT_CHECKPOINTS='s3://" + s.opts.checkpointBucket + query + "'",
	}
}

// serve serves the buckets until ctx is done, then answers the requests
// in flight (for shutdownWait at most) and closes the buckets' file.
func (s *store) serve(ctx context.Context) error {
	served := make(chan error, 1)
	go func() { served <- s.srv.Serve(s.ln) }()
	var err error
	select {
	case err = <-served:
	case <-ctx.Done():
		stopCtx, cancel := context.WithTimeout(context.Background(), shutdownWait)
		err = s.srv.Shutdown(stopCtx)
		cancel()
	}
	if errors.Is(err, http.ErrServerClosed) {
		err = nil
	}
	return errors.Join(err, s.db.Close())
}

// close releases a store that will not serve.
func (s *store) close() {
	s.ln.Close()
	s.db.Close()
}
