package jwe

import (
	"errors"
	"fmt"
)

// ErrTooLarge reports an envelope longer than the reader's limit.
var ErrTooLarge = errors.New("jwe: envelope too large")

// FormatError reports a malformed or unsupported envelope. Its message names
// the member or rule at fault and never includes key material or plaintext.
type FormatError struct {
	Reason string
}

func (e *FormatError) Error() string { return "jwe: " + e.Reason }

func formatErr(format string, args ...any) error {
	return &FormatError{Reason: fmt.Sprintf(format, args...)}
}
