// Package cli is what hdc's command groups share: the root command, which
// prints an error and exits non-zero, flags that take their defaults from
// the environment, and JSON output.
package cli

import (
	"errors"
	"fmt"
	"os"

	"github.com/spf13/cobra"

	"github.com/health-data-connect/hdc/internal/version"
)

// Main runs hdc with the commands cmds under its root: an error is printed
// on standard error, prefixed "hdc:", and exits with its ExitStatus.
func Main(cmds ...*cobra.Command) {
	if err := NewRoot(cmds...).Execute(); err != nil {
		fmt.Fprintln(os.Stderr, "hdc:", err)
		os.Exit(ExitStatus(err))
	}
}

// ExitError is an error that hdc exits with a status of its own for, so
// that a script can tell it from other failures (which exit 1).
type ExitError struct {
	Status int
	Err    error
}

func (e *ExitError) Error() string { return e.Err.Error() }

func (e *ExitError) Unwrap() error { return e.Err }

// ExitStatus returns the status hdc exits with for err: 0 for none, an
// ExitError's own, else 1.
func ExitStatus(err error) int {
	var e *ExitError
	switch {
	case err == nil:
		return 0
	case errors.As(err, &e):
		return e.Status
	}
	return 1
}

// NewRoot returns hdc's root command over cmds, with the version command:
// the tree Main runs, which tests walk.
func NewRoot(cmds ...*cobra.Command) *cobra.Command {
	root := &cobra.Command{
		Use:           "hdc",
		Short:         "Health Data Connect: operator and client command line",
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root.AddCommand(cmds...)
	root.AddCommand(newVersionCmd())
	return root
}

func newVersionCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Print the version and VCS revision this hdc was built from",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			_, err := fmt.Fprintln(cmd.OutOrStdout(), "hdc", version.Get())
			return err
		},
	}
}
