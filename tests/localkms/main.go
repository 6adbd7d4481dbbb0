// Command localkms serves github.com/nsmithuk/local-kms, an implementation
// of AWS KMS's API, on 127.0.0.1 only (local-kms's own main listens on
// every interface), with two symmetric keys made at start, the second for
// a rewrap. The tests run the backend's, the edge's and hdc's awskms://
// keeper against it, as against AWS.
//
// Usage: localkms DATA_DIR. It prints the address it serves on
// (127.0.0.1:port) and the keys' ids, a line each, then serves until
// killed.
package main

import (
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"time"

	"github.com/nsmithuk/local-kms/src"
	"github.com/nsmithuk/local-kms/src/config"
	"github.com/nsmithuk/local-kms/src/data"
)

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: localkms DATA_DIR")
		os.Exit(2)
	}
	config.AWSAccountId, config.AWSRegion, config.DatabasePath = "111122223333", "us-east-1", os.Args[1]
	database := data.NewDatabase(config.DatabasePath)
	defer database.Close()
	serve := func(w http.ResponseWriter, r *http.Request) { src.HandleRequest(w, r, database) }
	var keys [2]string
	for i := range keys {
		var err error
		if keys[i], err = createKey(serve); err != nil {
			fail(err)
		}
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		fail(err)
	}
	fmt.Println(ln.Addr().String())
	fmt.Println(keys[0])
	fmt.Println(keys[1])
	srv := &http.Server{Handler: http.HandlerFunc(serve), ReadHeaderTimeout: 10 * time.Second}
	fail(srv.Serve(ln))
}

// createKey makes a symmetric key through the API itself and returns its
// id.
func createKey(serve http.HandlerFunc) (string, error) {
	req := httptest.NewRequest(http.MethodPost, "/", strings.NewReader(`{"Description":"hdc tests"}`))
	req.Header.Set("Content-Type", "application/x-amz-json-1.1")
	req.Header.Set("X-Amz-Target", "TrentService.CreateKey")
	rec := httptest.NewRecorder()
	serve(rec, req)
	var out struct{ KeyMetadata struct{ KeyId string } }
	if err := json.Unmarshal(rec.Body.Bytes(), &out); err != nil || out.KeyMetadata.KeyId == "" {
		return "", fmt.Errorf("CreateKey answered %d %s", rec.Code, rec.Body)
	}
	return out.KeyMetadata.KeyId, nil
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "localkms:", err)
	os.Exit(1)
}
