package redact

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"strings"
	"testing"
)

// TestURL: a URL keeps what it names, never its password, query or
// fragment.
func TestURL(t *testing.T) {
	t.Parallel()
	tests := []struct{ name, url, want string }{
		{"no credentials", "s3://audit/hdc", "s3://audit/hdc"},
		{"a password", "postgres://hdc:s3cret@db:5432/hdc", "postgres://hdc:xxxxx@db:5432/hdc"},
		{"a user alone", "hashivault://hdc@hdc-key", "hashivault://hdc@hdc-key"},
		{"a query", "s3://audit?region=eu-west-1&token=s3cret", "s3://audit"},
		{"an empty query", "s3://audit?", "s3://audit"},
		{"a fragment", "file:///srv/audit#s3cret", "file:///srv/audit"},
		{"all of them", "awskms://hdc:s3cret@alias/hdc?token=s3cret#s3cret", "awskms://hdc:xxxxx@alias/hdc"},
		{"not a URL", "postgres://hdc:s3cret@db:port/hdc", "(a URL that does not parse)"},
		{"empty", "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if got := URL(tt.url); got != tt.want {
				t.Errorf("URL(%q) = %q, want %q", tt.url, got, tt.want)
			}
		})
	}
}

// TestError: the URL an error quotes, as given or as net/url writes it
// again, is in URL's form; the rest of the message, and the error it
// wraps, stay.
func TestError(t *testing.T) {
	t.Parallel()
	const raw = "awskms://hdc:s3cret@alias/hdc key?token=s3cret" // net/url writes the space as %20
	u, err := url.Parse(raw)
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name, url string
		err       error
		want      string
	}{
		{"quoted as given", raw, fmt.Errorf("open keeper %s: unknown query parameter %q: %w", raw, "token", context.Canceled),
			`open keeper awskms://hdc:xxxxx@alias/hdc%20key: unknown query parameter "token": context canceled`},
		{"quoted as net/url writes it", raw, fmt.Errorf("no driver for URL %q", u),
			`no driver for URL "awskms://hdc:xxxxx@alias/hdc%20key"`},
		{"quoted twice", raw, fmt.Errorf("%s: %v", raw, u), "awskms://hdc:xxxxx@alias/hdc%20key: awskms://hdc:xxxxx@alias/hdc%20key"},
		{"not quoted", raw, context.Canceled, "context canceled"},
		{"not a URL", "s3://hdc:s3cret@audit:port", &url.Error{Op: "parse", URL: "s3://hdc:s3cret@audit:port", Err: errors.New("invalid port")},
			`parse "(a URL that does not parse)": invalid port`},
		{"an empty URL", "", errors.New("no scheme"), "no scheme"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got := Error(tt.err, tt.url)
			if got.Error() != tt.want || strings.Contains(got.Error(), "s3cret") {
				t.Errorf("Error(%q) = %q, want %q", tt.err, got, tt.want)
			}
			if !errors.Is(got, tt.err) {
				t.Errorf("Error(%q) does not wrap it", tt.err)
			}
		})
	}
}
