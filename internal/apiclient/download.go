package apiclient

import (
	"bufio"
	"fmt"
	"io"
	"net/http"
	"os"

	"github.com/health-data-connect/hdc/internal/jwe"
)

// maxSavedEnvelope bounds an encrypted answer that --output spools.
const maxSavedEnvelope = 1 << 40

// SaveAnswer writes the body of a successful answer to dst (- for out) as
// it is read. An envelope is decrypted only once all of it is verified:
// meanwhile its ciphertext, never the plaintext, waits in a temporary file.
func (c *Client) SaveAnswer(method, path string, resp *http.Response, dst string, out io.Writer) error {
	src := c.Progress.reader(resp.Body, resp.ContentLength, "download")
	if !sealedAnswer(resp.Header) {
		if err := c.refusePlain(method, path, resp.StatusCode); err != nil {
			return err
		}
		return writeOutput(dst, src, out)
	}
	pt, done, err := c.openStream(resp.StatusCode, resp.Header, src)
	if err != nil {
		return err
	}
	defer done()
	return writeOutput(dst, pt, out)
}

// openStream reads an envelope from r into a temporary file, verifies it,
// and returns a reader of its plaintext and what removes the file.
func (c *Client) openStream(status int, h http.Header, r io.Reader) (io.Reader, func(), error) {
	if c.key == nil {
		return nil, nil, errNoKey
	}
	spool, err := os.CreateTemp("", "hdc-answer-*")
	if err != nil {
		return nil, nil, err
	}
	done := func() {
		spool.Close()
		os.Remove(spool.Name())
	}
	_ = os.Remove(spool.Name()) // where the system allows it, gone with the process even if killed
	bw := bufio.NewWriterSize(spool, 64<<10)
	e, err := jwe.Read(r, answerForm(h), bw, maxSavedEnvelope)
	if err != nil {
		done()
		return nil, nil, fmt.Errorf("refusing the answer (HTTP %d): it is not a valid envelope: %w", status, err)
	}
	if err := bw.Flush(); err != nil {
		done()
		return nil, nil, err
	}
	pt, _, err := e.Open(c.key, spool)
	if err != nil {
		done()
		return nil, nil, fmt.Errorf("refusing the answer (HTTP %d): it does not decrypt under key %s: %w", status, c.creds.Kid, err)
	}
	return pt, done, nil
}

// writeOutput copies r to the file path, created readable by its owner
// only (an answer is health data), or to out when path is "-". A regular
// file left incomplete by an error is removed.
func writeOutput(path string, r io.Reader, out io.Writer) error {
	if path == "-" {
		_, err := io.Copy(out, r)
		return err
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o600)
	if err != nil {
		return err
	}
	_, err = io.Copy(f, r)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		if st, serr := os.Stat(path); serr == nil && st.Mode().IsRegular() {
			_ = os.Remove(path)
		}
		return fmt.Errorf("writing %s: %w", path, err)
	}
	return nil
}
