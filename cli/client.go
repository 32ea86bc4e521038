package cli

import (
	"context"
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/spf13/cobra"

	"github.com/gpusched/gpusched/service/client"
)

// requestTimeout bounds every client call except a followed log stream.
const requestTimeout = 30 * time.Second

// clientOptions are the flags every client command (submit, jobs, job,
// cancel, logs, nodes) shares.
type clientOptions struct {
	server string
	output string
}

// addClientFlags adds --server and -o/--output to cmd.
func addClientFlags(cmd *cobra.Command, o *clientOptions) {
	o.output = outTable
	f := cmd.Flags()
	f.StringVar(&o.server, "server", "", "scheduler service URL (default $"+client.EnvServer+", else "+client.DefaultServer+")")
	f.VarP(outputFormat{v: &o.output}, "output", "o", "output format: table, json or yaml")
}

// allowWide lets cmd's -o flag (addClientFlags) take wide: the table with
// more columns.
func allowWide(cmd *cobra.Command, o *clientOptions) {
	fl := cmd.Flags().Lookup("output")
	fl.Value = outputFormat{v: &o.output, wide: true}
	fl.Usage = "output format: table, wide (more columns), json or yaml"
}

// connect returns a client of the server that --server, $GPUSCHED_SERVER
// or the default names; a malformed URL is bad input.
func (o *clientOptions) connect() (*client.Client, error) {
	url := client.ServerURL(o.server, os.Getenv)
	c, err := client.New(url, nil)
	if err != nil {
		if o.server == "" && os.Getenv(client.EnvServer) != "" {
			return nil, badInput("$%s: %w", client.EnvServer, err)
		}
		return nil, badInput("--server: %w", err)
	}
	return c, nil
}

// callContext bounds one request to the server.
func callContext(cmd *cobra.Command) (context.Context, context.CancelFunc) {
	return context.WithTimeout(cmd.Context(), requestTimeout)
}

// clientError turns an error of the client into the CLI's: a request the
// server rejected as bad input (400, 413) exits with 2, a missing job says
// "job ID not found", everything else (unreachable server, 409, 5xx) exits
// with 1 showing the server's message.
func clientError(err error, id string) error {
	if err == nil {
		return nil
	}
	var ce *client.Error
	if errors.As(err, &ce) {
		switch {
		case ce.NotFound() && id != "":
			return fmt.Errorf("job %s not found", id)
		case ce.BadRequest():
			return usageError{err}
		}
	}
	return err
}
