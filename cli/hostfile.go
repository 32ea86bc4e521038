package cli

import (
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/spf13/cobra"

	"github.com/gpusched/gpusched/service/client"
)

// envJobID names the job in a replica's environment (the membership
// variables); `hostfile` uses it when --job is not given.
const envJobID = "GPUSCHED_JOB_ID"

// hostfileOptions are the flags of `gpusched hostfile`.
type hostfileOptions struct {
	server, job string
}

func newHostfileCommand() *cobra.Command {
	o := &hostfileOptions{}
	cmd := &cobra.Command{
		Use:   "hostfile [--job ID] [--server URL]",
		Short: "Print a running job's current hosts, one host:slots line each",
		Long: "hostfile prints the current host list of a running job: one host:slots line per\n" +
			"node of the job, in node-rank order, as a horovodrun --host-discovery-script must\n" +
			"print it. It changes when an elastic job is resized or continues without a lost\n" +
			"node. It exits 0 with the list (empty when every replica of the job is gone), and\n" +
			"non-zero only on errors: 1 when the job is not running or the server cannot be\n" +
			"reached, 2 for bad input. --job defaults to $" + envJobID + ", which every replica\n" +
			"has, and the server to $" + client.EnvServer + ", which the agent sets for replicas.",
		Example: "  gpusched hostfile --job j7\n" +
			"  horovodrun -np 2 --min-np 1 --max-np 4 --host-discovery-script 'gpusched hostfile --job $GPUSCHED_JOB_ID' python train.py",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return runHostfile(cmd, o) },
	}
	f := cmd.Flags()
	f.StringVar(&o.job, "job", "", "the job's ID (default $"+envJobID+")")
	f.StringVar(&o.server, "server", "", "scheduler service URL (default $"+client.EnvServer+", else "+client.DefaultServer+")")
	return cmd
}

func runHostfile(cmd *cobra.Command, o *hostfileOptions) error {
	id := strings.TrimSpace(o.job)
	if id == "" {
		id = strings.TrimSpace(os.Getenv(envJobID))
	}
	if id == "" {
		return badInput("--job: which job? give --job ID (or set $%s)", envJobID)
	}
	co := clientOptions{server: o.server}
	c, err := co.connect()
	if err != nil {
		return err
	}
	ctx, cancel := callContext(cmd)
	defer cancel()
	list, err := c.Hostfile(ctx, id)
	if err != nil {
		return clientError(err, id)
	}
	if _, err := io.WriteString(cmd.OutOrStdout(), list); err != nil {
		return fmt.Errorf("hostfile %s: %w", id, err)
	}
	return nil
}
