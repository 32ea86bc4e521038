package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/gpusched/gpusched/service/api"
	"github.com/gpusched/gpusched/service/client"
)

// jobsOptions are the flags of `gpusched jobs`.
type jobsOptions struct {
	clientOptions
	state string
	eta   bool // --eta: with the forecasts (eta.go)
}

func newJobsCommand() *cobra.Command {
	o := &jobsOptions{}
	cmd := &cobra.Command{
		Use:   "jobs [--state STATE] [-o table|json|yaml]",
		Short: "List the jobs of the scheduler service",
		Long: "jobs lists the jobs the server knows, oldest first. The table shows times\n" +
			"relative to now; -o json prints a JSON array of jobs, -o yaml a YAML list\n" +
			"(times in RFC 3339).",
		Example: "  gpusched jobs\n" +
			"  gpusched jobs --state running\n" +
			"  gpusched jobs -o json | jq -r '.[] | select(.state==\"failed\") | .id'",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return runJobs(cmd, o) },
	}
	addClientFlags(cmd, &o.clientOptions)
	cmd.Flags().StringVar(&o.state, "state", "", "only jobs in this state: "+statesText())
	cmd.Flags().BoolVar(&o.eta, "eta", false, "add each active job's predicted start and finish (docs/ETA.md)")
	return cmd
}

func statesText() string {
	s := make([]string, 0, len(api.States()))
	for _, st := range api.States() {
		s = append(s, string(st))
	}
	return strings.Join(s, ", ")
}

func runJobs(cmd *cobra.Command, o *jobsOptions) error {
	state := api.State(o.state)
	if state != "" && !slices.Contains(api.States(), state) {
		return badInput("--state %q: want one of %s", o.state, statesText())
	}
	if o.eta {
		return runJobsETA(cmd, o, state)
	}
	return call(cmd, &o.clientOptions, "",
		func(ctx context.Context, c *client.Client) ([]api.Job, error) { return c.Jobs(ctx, state) },
		func(w io.Writer, jobs []api.Job) error { return writeJobsTable(w, jobs, time.Now()) })
}

// call connects with o, runs one request with a bounded context and prints
// its answer: as JSON or YAML with -o, else with table. id names the job in
// error messages ("" when there is none).
func call[T any](cmd *cobra.Command, o *clientOptions, id string,
	request func(context.Context, *client.Client) (T, error), table func(io.Writer, T) error) error {
	c, err := o.connect()
	if err != nil {
		return err
	}
	ctx, cancel := callContext(cmd)
	defer cancel()
	v, err := request(ctx, c)
	if err != nil {
		return clientError(err, id)
	}
	if o.output != outTable && o.output != outWide {
		return writeValue(cmd.OutOrStdout(), o.output, v)
	}
	return table(cmd.OutOrStdout(), v)
}

func newJobCommand() *cobra.Command {
	o := &clientOptions{}
	cmd := &cobra.Command{
		Use:   "job ID [-o table|json|yaml]",
		Short: "Show one job: its spec, state, allocation, exit code and events",
		Example: "  gpusched job j7\n" +
			"  gpusched job j7 -o json | jq .exit_code",
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return call(cmd, o, args[0],
				func(ctx context.Context, c *client.Client) (api.Job, error) { return c.Job(ctx, args[0]) },
				func(w io.Writer, j api.Job) error { return writeJobDetail(w, j, time.Now()) })
		},
	}
	addClientFlags(cmd, o)
	return cmd
}

func newCancelCommand() *cobra.Command {
	o := &clientOptions{}
	cmd := &cobra.Command{
		Use:   "cancel ID [-o table|json|yaml]",
		Short: "Cancel a job: stop its replicas (SIGTERM, grace period, SIGKILL) or drop it from the queue",
		Long: "cancel cancels a queued, running or preempted job and prints its ID and new\n" +
			"state. Cancelling a job that has already ended is an error (exit status 1).",
		Example: "  gpusched cancel j7",
		Args:    cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return call(cmd, o, args[0],
				func(ctx context.Context, c *client.Client) (api.Job, error) { return c.Cancel(ctx, args[0]) },
				func(w io.Writer, j api.Job) error {
					_, err := fmt.Fprintf(w, "%s %s\n", j.ID, j.State)
					return err
				})
		},
	}
	addClientFlags(cmd, o)
	return cmd
}

// logsOptions are the flags of `gpusched logs`.
type logsOptions struct {
	clientOptions
	follow bool
}

func newLogsCommand() *cobra.Command {
	o := &logsOptions{}
	cmd := &cobra.Command{
		Use:   "logs ID [-f]",
		Short: "Print a job's output (stdout and stderr of its replicas)",
		Long: "logs copies a job's output to stdout. With -f it keeps printing new output\n" +
			"until the job ends and the server closes the stream (or until interrupted).\n" +
			"The output is plain text: -o accepts only table, the default.",
		Example: "  gpusched logs j7\n" +
			"  gpusched logs -f j7",
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error { return runLogs(cmd, o, args[0]) },
	}
	addClientFlags(cmd, &o.clientOptions)
	cmd.Flags().BoolVarP(&o.follow, "follow", "f", false, "keep printing new output until the job ends")
	return cmd
}

func runLogs(cmd *cobra.Command, o *logsOptions, id string) error {
	if o.output != outTable {
		return badInput("logs: output is plain text, -o %s is not supported", o.output)
	}
	c, err := o.connect()
	if err != nil {
		return err
	}
	ctx := cmd.Context()
	if !o.follow {
		var cancel func()
		ctx, cancel = callContext(cmd)
		defer cancel()
	}
	rc, err := c.Logs(ctx, id, o.follow)
	if err != nil {
		return clientError(err, id)
	}
	defer rc.Close()
	if _, err := io.Copy(cmd.OutOrStdout(), rc); err != nil {
		if errors.Is(err, io.ErrUnexpectedEOF) {
			return fmt.Errorf("logs %s: the server closed the stream early", id)
		}
		return fmt.Errorf("logs %s: %w", id, err)
	}
	return nil
}

func newNodesCommand() *cobra.Command {
	o := &clientOptions{}
	cmd := &cobra.Command{
		Use:   "nodes [-o table|wide|json|yaml]",
		Short: "List the cluster's nodes: state, GPUs, GPUs in use, last heartbeat",
		Long: "nodes lists the nodes the server knows. -o wide adds what the jobs on each node\n" +
			"use and leave free of its CPUs, memory and named resources (as its agent\n" +
			"reports them, less what the admin reserves; \"-\" for what it does not report),\n" +
			"and seed 002's view of each (docs/ENERGY.md, \"Live\"): its class, load state,\n" +
			"the load thresholds in use for the default algorithm type with their source\n" +
			"(learned, cluster-file, catalog), the samples and quality of a learned fit, its\n" +
			"measured distances to data endpoints and the energy it drew.",
		Example: "  gpusched nodes\n" +
			"  gpusched nodes -o wide\n" +
			"  gpusched nodes -o json | jq '[.[].gpus | length] | add'",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return call(cmd, o, "",
				func(ctx context.Context, c *client.Client) ([]api.Node, error) { return c.Nodes(ctx) },
				func(w io.Writer, nodes []api.Node) error {
					if o.output == outWide {
						return writeNodesWide(w, nodes, time.Now())
					}
					return writeNodesTable(w, nodes, time.Now())
				})
		},
	}
	addClientFlags(cmd, o)
	allowWide(cmd, o)
	return cmd
}
