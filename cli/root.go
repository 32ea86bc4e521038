package cli

import (
	"errors"
	"fmt"
	"io"

	"github.com/spf13/cobra"
)

// Exit statuses.
const (
	exitOK    = 0
	exitError = 1
	exitUsage = 2
)

// usageError marks an error caused by bad input; it exits with status 2.
type usageError struct{ err error }

func (e usageError) Error() string { return e.err.Error() }
func (e usageError) Unwrap() error { return e.err }

// badInput wraps err (formatted like fmt.Errorf) as a usage error.
func badInput(format string, a ...any) error {
	return usageError{fmt.Errorf(format, a...)}
}

// NewRoot returns the gpusched command with all its subcommands.
func NewRoot(stdout, stderr io.Writer) *cobra.Command {
	root := &cobra.Command{
		Use:   "gpusched",
		Short: "Schedule deep-learning training jobs on GPU clusters",
		Long: "gpusched schedules deep-learning training jobs on GPU clusters: speed-aware,\n" +
			"elastic and energy-aware policies in one pure core, run by a trace-driven\n" +
			"simulator (sim) and by a scheduler service (dev, or server plus agents),\n" +
			"driven with submit, jobs, job, cancel, logs and nodes.",
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root.SetOut(stdout)
	root.SetErr(stderr)
	root.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return usageError{err} })
	root.AddCommand(newSimCommand())
	root.AddCommand(newCalibrateCommand())
	root.AddCommand(newSubmitCommand())
	root.AddCommand(newJobsCommand())
	root.AddCommand(newJobCommand())
	root.AddCommand(newCancelCommand())
	root.AddCommand(newLogsCommand())
	root.AddCommand(newHostfileCommand())
	root.AddCommand(newNodesCommand())
	root.AddCommand(newProfilesCommand())
	root.AddCommand(newPowerSamplesCommand())
	root.AddCommand(newTaskCommand())
	root.AddCommand(newAgentCommand())
	root.AddCommand(newServerCommand())
	root.AddCommand(newDevCommand())
	root.AddCommand(newShimCommand())
	root.AddCommand(newETACommand())
	root.AddCommand(newKubeCommand())
	root.AddCommand(newProgressCommand())
	// Authentication, queues and the audit log (issue 18).
	root.AddCommand(newLoginCommand(), newWhoamiCommand(), newTokenCommand(), newQueuesCommand(), newAuditCommand())
	root.AddCommand(newEnergyCommand())
	return root
}

// Execute runs gpusched with args and returns the process exit status.
func Execute(args []string, stdout, stderr io.Writer) int {
	root := NewRoot(stdout, stderr)
	root.SetArgs(args)
	err := root.Execute()
	if err == nil {
		return exitOK
	}
	fmt.Fprintln(stderr, "gpusched:", err)
	var ue usageError
	if errors.As(err, &ue) || isCobraUsage(err) {
		return exitUsage
	}
	return exitError
}

// isCobraUsage recognises cobra's own argument errors (unknown command,
// wrong number of arguments), which it does not type.
func isCobraUsage(err error) bool {
	msg := err.Error()
	for _, p := range []string{"unknown command", "accepts ", "requires ", "unknown flag", "unknown shorthand"} {
		if len(msg) >= len(p) && (msg[:len(p)] == p) {
			return true
		}
	}
	return false
}
