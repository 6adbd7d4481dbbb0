package cli

import (
	"errors"
	"fmt"
	"testing"
)

func TestExitStatus(t *testing.T) {
	t.Parallel()
	own := &ExitError{Status: 3, Err: errors.New("no checkpoint yet")}
	for _, tt := range []struct {
		name string
		err  error
		want int
	}{
		{"none", nil, 0},
		{"an error", errors.New("failed"), 1},
		{"an exit error", own, 3},
		{"an exit error wrapped", fmt.Errorf("verify: %w", own), 3},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if got := ExitStatus(tt.err); got != tt.want {
				t.Errorf("ExitStatus(%v) = %d, want %d", tt.err, got, tt.want)
			}
		})
	}
	if own.Error() != "no checkpoint yet" || !errors.Is(own, own.Err) {
		t.Errorf("the exit error reads %q and unwraps to %v", own.Error(), errors.Unwrap(own))
	}
}
