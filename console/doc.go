// Package console is the operator console: web pages over the Admin API
// that hdc console serves on the operator's machine. It holds no rule and
// no credential of its own: every page is a call of the Admin API's client
// made with the operator's own certificate, so that the API decides, and
// audits, what the person may do; an auditor's certificate gets the same
// refusals through the console as on the command line, and its pages show
// no button that changes anything.
//
// The browser is admitted once: hdc console prints a URL with a one-time
// token, which the browser exchanges for a session cookie (HttpOnly,
// SameSite=Strict). The console answers only under the names it listens
// on (a foreign Host is 421, against DNS rebinding). Every change is a
// POST that carries the session's CSRF token and its form's one-time key
// (the API's Idempotency-Key), passes net/http's CrossOriginProtection,
// and answers 303 to its result (post/redirect/get), a new secret shown
// once; a change that takes something away is confirmed on a page of its
// own first. Every page sends a strict Content-Security-Policy (no inline
// script or style).
package console
