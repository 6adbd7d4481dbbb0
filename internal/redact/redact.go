// Package redact takes what may be a credential out of a URL that is to be
// printed. A URL may hold a password, and in its query a token; libraries
// quote the URLs they were given in their errors, gocloud.dev's openers of
// keepers and buckets whole.
package redact

import (
	"net/url"
	"strings"
)

// URL returns rawURL as it may be printed: its scheme, user name, host and
// path, which say what it names, with its password as "xxxxx" and without
// its query and fragment. A URL that holds a secret in its host or path
// (base64key://) is not to be printed at all. What does not parse as a URL
// is not printed either.
func URL(rawURL string) string {
	u, err := url.Parse(rawURL)
	if err != nil {
		return "(a URL that does not parse)"
	}
	u.RawQuery, u.ForceQuery, u.Fragment, u.RawFragment = "", false, "", ""
	return u.Redacted()
}

// Error returns err, which must not be nil, with rawURL in URL's form
// wherever its message quotes it, as given or as net/url writes it again.
// It wraps err, for errors.Is and errors.As: print its message, never
// err's.
func Error(err error, rawURL string) error {
	quoted := []string{rawURL}
	if u, perr := url.Parse(rawURL); perr == nil {
		quoted = append(quoted, u.String())
	}
	msg, safe := err.Error(), URL(rawURL)
	for _, q := range quoted {
		if q != "" { // ReplaceAll would put safe between every two bytes
			msg = strings.ReplaceAll(msg, q, safe)
		}
	}
	return &redacted{msg: msg, err: err}
}

// redacted is an error whose message is another's, redacted.
type redacted struct {
	msg string
	err error
}

// Error returns the message, redacted.
func (r *redacted) Error() string { return r.msg }

// Unwrap returns the error as it was, whose message quotes the URL.
func (r *redacted) Unwrap() error { return r.err }
