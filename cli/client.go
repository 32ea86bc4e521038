package cli

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
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
	// token and ca are the credentials (clientcfg.go).
	token, ca string
}

// addClientFlags adds --server, --token, --ca and -o/--output to cmd.
func addClientFlags(cmd *cobra.Command, o *clientOptions) {
	o.output = outTable
	f := cmd.Flags()
	f.StringVar(&o.server, "server", "", "scheduler service URL, or a comma-separated list of the servers sharing an etcd store (default $"+client.EnvServer+", else the config file's, else "+client.DefaultServer+")")
	o.addCredentialFlags(cmd)
	f.VarP(outputFormat{v: &o.output}, "output", "o", "output format: table, json or yaml")
}

// allowWide lets cmd's -o flag (addClientFlags) take wide: the table with
// more columns.
func allowWide(cmd *cobra.Command, o *clientOptions) {
	fl := cmd.Flags().Lookup("output")
	fl.Value = outputFormat{v: &o.output, wide: true}
	fl.Usage = "output format: table, wide (more columns), json or yaml"
}

// connect returns a client of the server that --server, $GPUSCHED_SERVER,
// the config file or the default names, with the token and CA of the
// flags, the environment or the config file (clientcfg.go); a malformed URL
// or an unreadable CA file is bad input.
func (o *clientOptions) connect() (*client.Client, error) {
	cfg, err := loadClientConfig(os.Getenv)
	if err != nil {
		return nil, err
	}
	url := client.ServerURL(o.server, cfg.getenv(os.Getenv))
	opts := o.credentials(cfg)
	c, err := client.NewWithOptions(url, opts)
	if err != nil {
		switch {
		case opts.CAFile != "" && !strings.Contains(err.Error(), "server URL"):
			return nil, badInput("--ca: %w", err)
		case o.server == "" && os.Getenv(client.EnvServer) != "":
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
