package cli

import (
	"errors"

	"github.com/spf13/cobra"

	"github.com/gpusched/gpusched/service/shim"
)

// newShimCommand is the hidden `gpusched shim`, which an agent starts for
// every replica (shim.Run; docs/AGENT.md, "Shims"). It parses its own
// arguments.
func newShimCommand() *cobra.Command {
	return &cobra.Command{
		Use:                "shim --dir DIR [--grace SECONDS] [--hello-fd N] -- COMMAND ARGS...",
		Short:              "Run one replica for the agent and record how it ended (started by the agent)",
		Hidden:             true,
		DisableFlagParsing: true,
		RunE: func(_ *cobra.Command, args []string) error {
			err := shim.Run(args)
			if errors.Is(err, shim.ErrUsage) {
				return usageError{err}
			}
			return err
		},
	}
}
