// Command hdc-healthcheck asks a URL for an answer and exits 0 if the answer
// is 2xx, 1 otherwise: the health check of the container image, which has no
// shell, curl or wget to make one.
//
//	hdc-healthcheck [-timeout 5s] [-ca FILE -server-name NAME] URL
//
// deploy/compose.yaml probes the backend's GET /readyz on its internal
// listener, over the hop's TLS (the hop's authority as the one root, the
// backend's certificate name; a health route needs no client
// certificate), and the edge's metrics listener. A redirect is not followed: it
// is an answer other than 2xx.
package main

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"time"
)

func main() {
	if err := run(os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "hdc-healthcheck:", err)
		os.Exit(1)
	}
}

func run(args []string) error {
	fs := flag.NewFlagSet("hdc-healthcheck", flag.ContinueOnError)
	timeout := fs.Duration("timeout", 5*time.Second, "how long the whole request may take")
	ca := fs.String("ca", "", "PEM file of the one authority to trust over https (default: the system's)")
	serverName := fs.String("server-name", "", "the name the server's certificate must have (default: the URL's host)")
	fs.Usage = func() {
		fmt.Fprintln(fs.Output(), "usage: hdc-healthcheck [-timeout D] [-ca FILE -server-name NAME] URL")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() != 1 {
		fs.Usage()
		return errors.New("want exactly one URL")
	}
	u, err := url.Parse(fs.Arg(0))
	if err != nil {
		return err
	}
	if u.Scheme != "http" && u.Scheme != "https" || u.Host == "" {
		return fmt.Errorf("%q: want an http or https URL", fs.Arg(0))
	}
	tlsConfig := &tls.Config{ServerName: *serverName}
	if *ca != "" {
		pem, err := os.ReadFile(*ca)
		if err != nil {
			return err
		}
		tlsConfig.RootCAs = x509.NewCertPool()
		if !tlsConfig.RootCAs.AppendCertsFromPEM(pem) {
			return fmt.Errorf("%s holds no PEM certificate", *ca)
		}
	}
	client := &http.Client{
		Timeout:   *timeout,
		Transport: &http.Transport{TLSClientConfig: tlsConfig},
		CheckRedirect: func(*http.Request, []*http.Request) error {
			return http.ErrUseLastResponse
		},
	}
	resp, err := client.Get(u.String())
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	io.Copy(io.Discard, io.LimitReader(resp.Body, 1<<20))
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return fmt.Errorf("GET %s: %s", u.Redacted(), resp.Status)
	}
	return nil
}
