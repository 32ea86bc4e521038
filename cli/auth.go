package cli

import (
	"context"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/gpusched/gpusched/service/api"
	"github.com/gpusched/gpusched/service/client"
)

// The commands of authentication, queues and the audit log (issue 18,
// docs/SECURITY.md and docs/QUEUES.md): login, whoami, token, queues,
// audit.

func newLoginCommand() *cobra.Command {
	o := &clientOptions{}
	cmd := &cobra.Command{
		Use:   "login --server URL --token TOKEN [--ca FILE]",
		Short: "Check a token with the server and keep server, token and CA in the config file",
		Long: "login asks the server who the token is (GET /v1/whoami) and, when it answers,\n" +
			"writes the server, the token and the CA certificate to the client config file\n" +
			"(~/.config/gpusched/config.yaml, or $" + envConfig + "; mode 0600), which every\n" +
			"command reads when neither flags nor the environment name them.",
		Example: "  gpusched login --server https://head:7070 --token \"$(cat token)\" --ca ca.crt\n" +
			"  sudo cat /var/lib/gpusched/admin.token | xargs gpusched login --token",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return runLogin(cmd, o) },
	}
	addClientFlags(cmd, o)
	return cmd
}

// runLogin checks the credentials and writes them.
func runLogin(cmd *cobra.Command, o *clientOptions) error {
	cfg, err := loadClientConfig(os.Getenv)
	if err != nil {
		return err
	}
	creds := o.credentials(cfg)
	if creds.Token == "" {
		return badInput("login: no token: give --token or $%s", client.EnvToken)
	}
	c, err := o.connect()
	if err != nil {
		return err
	}
	ctx, cancel := callContext(cmd)
	defer cancel()
	id, err := c.Whoami(ctx)
	if err != nil {
		return clientError(err, "")
	}
	path, err := clientConfigPath(os.Getenv)
	if err != nil {
		return err
	}
	if creds.CAFile != "" {
		if creds.CAFile, err = filepath.Abs(creds.CAFile); err != nil {
			return badInput("--ca: %w", err)
		}
	}
	if err := saveClientConfig(path, clientConfig{Server: c.URL(), Token: creds.Token, CA: creds.CAFile}); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	fmt.Fprintf(cmd.OutOrStdout(), "logged in to %s as %s; config in %s\n", c.URL(), describeIdentity(id), path)
	return nil
}

// describeIdentity is "user alice (role user)", "node gpu7", "anonymous".
func describeIdentity(id api.Identity) string {
	switch id.Kind {
	case "user":
		return "user " + id.User + " (role " + id.Role + ")"
	case "node":
		return "node " + id.Node
	case "job":
		return "job " + id.Job
	}
	return id.Kind
}

func newWhoamiCommand() *cobra.Command {
	o := &clientOptions{}
	cmd := &cobra.Command{
		Use:   "whoami [-o table|json|yaml]",
		Short: "Show who the token is: user, role, the queues one may submit to",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return call(cmd, o, "", func(ctx context.Context, c *client.Client) (api.Identity, error) { return c.Whoami(ctx) },
				func(w io.Writer, id api.Identity) error {
					fmt.Fprintln(w, describeIdentity(id))
					if len(id.Queues) > 0 {
						fmt.Fprintln(w, "queues: "+strings.Join(id.Queues, ", "))
					}
					return nil
				})
		},
	}
	addClientFlags(cmd, o)
	return cmd
}

func newTokenCommand() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "token (create | list | revoke ID)",
		Short: "Manage tokens (admins): users' tokens, agents' join tokens, nodes' credentials",
		Long: "token creates, lists and revokes the server's tokens (docs/SECURITY.md). A new\n" +
			"token is printed once; the server keeps only its hash. A revoked token stops\n" +
			"working at once; revoking a node's credential lets another agent join under its name.",
		Args: cobra.NoArgs,
	}
	cmd.AddCommand(newTokenCreateCommand(), newTokenListCommand(), newTokenRevokeCommand())
	return cmd
}

func newTokenCreateCommand() *cobra.Command {
	o := &clientOptions{}
	var req api.TokenRequest
	var ttl time.Duration
	cmd := &cobra.Command{
		Use:   "create (--user NAME [--role user|admin] | --join) [--ttl DURATION]",
		Short: "Create a user's token or a join token and print it (once)",
		Example: "  gpusched token create --user alice\n" +
			"  gpusched token create --user root --role admin --ttl 720h\n" +
			"  gpusched token create --join > join.token",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if ttl < 0 {
				return badInput("--ttl %s: must not be negative", ttl)
			}
			req.TTLS = int64(ttl / time.Second)
			if err := req.Validate(); err != nil {
				return badInput("token create: %w", err)
			}
			return call(cmd, o, "", func(ctx context.Context, c *client.Client) (api.TokenCreated, error) { return c.CreateToken(ctx, req) },
				func(w io.Writer, t api.TokenCreated) error {
					_, err := fmt.Fprintln(w, t.Token)
					return err
				})
		},
	}
	addClientFlags(cmd, o)
	f := cmd.Flags()
	f.StringVar(&req.User, "user", "", "the user the token is for")
	f.StringVar(&req.Role, "role", "", "user (default) or admin")
	f.BoolVar(&req.Join, "join", false, "a join token, with which agents register new nodes")
	f.DurationVar(&ttl, "ttl", 0, "lifetime, e.g. 720h (default: no expiry)")
	return cmd
}

func newTokenListCommand() *cobra.Command {
	o := &clientOptions{}
	cmd := &cobra.Command{
		Use:   "list [-o table|json|yaml]",
		Short: "List the tokens (without secrets)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return call(cmd, o, "", func(ctx context.Context, c *client.Client) ([]api.TokenInfo, error) { return c.Tokens(ctx) },
				func(w io.Writer, ts []api.TokenInfo) error { return writeTokensTable(w, ts, time.Now()) })
		},
	}
	addClientFlags(cmd, o)
	return cmd
}

func writeTokensTable(w io.Writer, ts []api.TokenInfo, now time.Time) error {
	tw := newTable(w)
	fmt.Fprintln(tw, "ID\tKIND\tUSER\tROLE\tNODE\tCREATED\tBY\tEXPIRES")
	for _, t := range ts {
		exp := "-"
		if t.ExpiresAt != nil {
			exp = t.ExpiresAt.Format(time.RFC3339)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", t.ID, t.Kind, dash(t.User), dash(t.Role), dash(t.Node),
			ago(t.CreatedAt, now), dash(t.CreatedBy), exp)
	}
	return tw.Flush()
}

func newTokenRevokeCommand() *cobra.Command {
	o := &clientOptions{}
	cmd := &cobra.Command{
		Use:   "revoke ID",
		Short: "Revoke a token: it stops working at once",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return call(cmd, o, "", func(ctx context.Context, c *client.Client) (api.TokenInfo, error) { return c.RevokeToken(ctx, args[0]) },
				func(w io.Writer, t api.TokenInfo) error {
					_, err := fmt.Fprintf(w, "revoked %s (%s %s%s)\n", t.ID, t.Kind, t.User, t.Node)
					return err
				})
		},
	}
	addClientFlags(cmd, o)
	return cmd
}

func newQueuesCommand() *cobra.Command {
	o := &clientOptions{}
	cmd := &cobra.Command{
		Use:   "queues [-o table|json|yaml]",
		Short: "List the teams' queues: quota, limit, GPUs used and borrowed, pending jobs, fair-share usage and share",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return call(cmd, o, "", func(ctx context.Context, c *client.Client) (api.QueueList, error) { return c.Queues(ctx) },
				func(w io.Writer, l api.QueueList) error { return writeQueuesTable(w, l) })
		},
	}
	addClientFlags(cmd, o)
	return cmd
}

func writeQueuesTable(w io.Writer, l api.QueueList) error {
	if len(l.Queues) == 0 {
		_, err := fmt.Fprintln(w, "no queues are configured (docs/QUEUES.md)")
		return err
	}
	tw := newTable(w)
	fmt.Fprintf(tw, "NAME\tWEIGHT\tQUOTA\tLIMIT\tUSED\tBORROWED\tRUNNING\tPENDING\tUSAGE (%s GPU-h)\tSHARE\n", l.FairShare)
	for _, q := range l.Queues {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%d\t%d\t%d (%d GPUs)\t%.1f\t%.1f%%\n", q.Name, strconv.FormatFloat(q.Weight, 'g', -1, 64),
			counts(q.Quota), counts(q.Limit), counts(q.Used), q.Borrowed, q.RunningJobs, q.PendingJobs, q.PendingGPUs,
			q.UsageGPUHours, 100*q.Share)
	}
	return tw.Flush()
}

// counts formats GPUs per type: "v100=16,k80=32", "-" when none.
func counts(m map[string]int) string {
	var parts []string
	for _, t := range slices.Sorted(maps.Keys(m)) {
		parts = append(parts, t+"="+strconv.Itoa(m[t]))
	}
	return dash(strings.Join(parts, ","))
}

func newAuditCommand() *cobra.Command {
	o := &clientOptions{}
	var limit int
	cmd := &cobra.Command{
		Use:   "audit [--limit N] [-o table|json|yaml]",
		Short: "Show the audit log (admins): who changed what, when",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if limit < 1 || limit > 10000 {
				return badInput("--limit %d: want 1..10000", limit)
			}
			return call(cmd, o, "", func(ctx context.Context, c *client.Client) ([]api.AuditEntry, error) { return c.Audit(ctx, limit) },
				func(w io.Writer, es []api.AuditEntry) error {
					tw := newTable(w)
					fmt.Fprintln(tw, "TIME\tWHO\tACTION\tTARGET\tSTATUS")
					for _, e := range es {
						fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%d\n", e.Time.Format(time.RFC3339), e.Who, e.Action, dash(e.Target), e.Status)
					}
					return tw.Flush()
				})
		},
	}
	addClientFlags(cmd, o)
	cmd.Flags().IntVar(&limit, "limit", 50, "how many of the latest entries")
	return cmd
}

func dash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
