package cli

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/gpusched/gpusched/service/api"
	"github.com/gpusched/gpusched/service/client"
)

// newTaskCommand is `gpusched task`: seed 001's EDL primitives of a job
// (docs/EDL.md) from the shell.
func newTaskCommand() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "task",
		Short: "A job's EDL primitives: data task queue, master lock, pserver slots (docs/EDL.md)",
		Long: "task reaches seed 001's fault-tolerance primitives of a job: register its data\n" +
			"tasks, lease the next one and report it done or failed, take the master role,\n" +
			"claim a pserver slot. Holders default to $GPUSCHED_REPLICA_ID (set in every replica).",
		Example: "  seq -f 'shard-%03g' 0 999 | gpusched task register j7 --passes 2 --ttl 60s\n" +
			"  gpusched task lease j7 -o json\n" +
			"  gpusched task done j7 12 --lease 1a2b3c\n" +
			"  gpusched task status j7",
	}
	cmd.AddCommand(newTaskRegister(), newTaskStatus(), newTaskLease(), newTaskReport(true), newTaskReport(false),
		newTaskMaster(), newTaskPServers(), newTaskClaim())
	return cmd
}

// holderFlag adds --holder (default $GPUSCHED_REPLICA_ID).
func holderFlag(cmd *cobra.Command, h *string) {
	cmd.Flags().StringVar(h, "holder", os.Getenv("GPUSCHED_REPLICA_ID"), "name of this process (default $GPUSCHED_REPLICA_ID)")
}

func newTaskRegister() *cobra.Command {
	o := &clientOptions{}
	var (
		file                string
		passes, maxFailures int
		ttl                 time.Duration
	)
	cmd := &cobra.Command{
		Use:   "register JOB [--file FILE] [--passes N] [--max-failures N] [--ttl D]",
		Short: "Register a job's data tasks, one per line of FILE (default stdin)",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			tasks, err := readTasks(cmd.InOrStdin(), file)
			if err != nil {
				return err
			}
			spec := api.TaskQueueSpec{Tasks: tasks, Passes: passes, MaxFailures: maxFailures, TTLS: ttl.Seconds()}
			return call(cmd, o, "", func(ctx context.Context, c *client.Client) (api.TaskQueue, error) {
				return c.RegisterTasks(ctx, args[0], spec)
			}, writeQueue)
		},
	}
	f := cmd.Flags()
	f.StringVar(&file, "file", "-", "file with one task per line (- is stdin)")
	f.IntVar(&passes, "passes", 1, "how many times every task is done")
	f.IntVar(&maxFailures, "max-failures", 3, "a task that failed (or whose lease expired) this often is marked failed")
	f.DurationVar(&ttl, "ttl", time.Minute, "default lease of a task")
	addClientFlags(cmd, o)
	return cmd
}

// readTasks reads the non-empty lines of file ("-": r).
func readTasks(r io.Reader, file string) ([]string, error) {
	if file != "-" {
		f, err := os.Open(file)
		if err != nil {
			return nil, badInput("--file: %w", err)
		}
		defer f.Close()
		r = f
	}
	var tasks []string
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		if line := strings.TrimSpace(sc.Text()); line != "" {
			tasks = append(tasks, line)
		}
	}
	if err := sc.Err(); err != nil {
		return nil, badInput("read tasks: %w", err)
	}
	if len(tasks) == 0 {
		return nil, badInput("no task given: one per line on stdin or in --file")
	}
	return tasks, nil
}

func newTaskStatus() *cobra.Command {
	o := &clientOptions{}
	cmd := &cobra.Command{
		Use:   "status JOB",
		Short: "Show a job's task queue: pass, tasks to do, leased, done, failed",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return call(cmd, o, "", func(ctx context.Context, c *client.Client) (api.TaskQueue, error) {
				return c.Tasks(ctx, args[0])
			}, writeQueue)
		},
	}
	addClientFlags(cmd, o)
	return cmd
}

// writeQueue prints a queue as one table row.
func writeQueue(w io.Writer, q api.TaskQueue) error {
	return table(w, "PASS\tTODO\tLEASED\tDONE\tFAILED\tDONE_TOTAL\tFINISHED",
		fmt.Sprintf("%d/%d\t%d\t%d\t%d\t%d\t%d\t%v", q.Pass, q.Passes, q.Todo, q.Leased, q.Done, q.Failed, q.DoneTotal, q.Finished))
}

// table prints tab-separated rows as aligned columns.
func table(w io.Writer, rows ...string) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	for _, r := range rows {
		fmt.Fprintln(tw, r)
	}
	return tw.Flush()
}

func newTaskLease() *cobra.Command {
	o := &clientOptions{}
	var (
		holder string
		ttl    time.Duration
	)
	cmd := &cobra.Command{
		Use:   "lease JOB [--holder H] [--ttl D]",
		Short: "Lease a job's next task; prints INDEX LEASE DATA, or wait/finished",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			req := api.LeaseRequest{Holder: holder, TTLS: ttl.Seconds()}
			return call(cmd, o, "", func(ctx context.Context, c *client.Client) (api.Lease, error) {
				return c.Lease(ctx, args[0], req)
			}, func(w io.Writer, l api.Lease) error {
				if l.Task == nil {
					_, err := fmt.Fprintln(w, l.Status)
					return err
				}
				_, err := fmt.Fprintf(w, "%d %s %s\n", l.Task.Index, l.Task.Lease, l.Task.Data)
				return err
			})
		},
	}
	holderFlag(cmd, &holder)
	cmd.Flags().DurationVar(&ttl, "ttl", 0, "lease (default: the queue's)")
	addClientFlags(cmd, o)
	return cmd
}

// newTaskReport is `task done` (ok) or `task failed`.
func newTaskReport(ok bool) *cobra.Command {
	o := &clientOptions{}
	var lease string
	verb, short := "done", "Report a leased task done"
	if !ok {
		verb, short = "failed", "Report a leased task failed (it returns to the queue, or is marked failed)"
	}
	cmd := &cobra.Command{
		Use:   verb + " JOB INDEX --lease L",
		Short: short,
		Args:  cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			index, err := strconv.Atoi(args[1])
			if err != nil || index < 0 {
				return badInput("INDEX %q: want a task index", args[1])
			}
			if lease == "" {
				return badInput("--lease is required (the token `task lease` printed)")
			}
			return call(cmd, o, "", func(ctx context.Context, c *client.Client) (api.TaskQueue, error) {
				return c.Report(ctx, args[0], index, lease, ok)
			}, writeQueue)
		},
	}
	cmd.Flags().StringVar(&lease, "lease", "", "the task's lease token")
	addClientFlags(cmd, o)
	return cmd
}

func newTaskMaster() *cobra.Command {
	o := &clientOptions{}
	var (
		req  api.MasterRequest
		ttl  time.Duration
		take bool
	)
	cmd := &cobra.Command{
		Use:   "master JOB [--take --holder H --addr A --ttl D | --release]",
		Short: "Show a job's master role, or take (renew, release) it",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			req.TTLS = ttl.Seconds()
			return call(cmd, o, "", func(ctx context.Context, c *client.Client) (api.Master, error) {
				if !take && !req.Release {
					return c.Master(ctx, args[0])
				}
				return c.AcquireMaster(ctx, args[0], req)
			}, func(w io.Writer, m api.Master) error {
				return table(w, "HOLDER\tADDR\tEPOCH\tGRANTED",
					fmt.Sprintf("%s\t%s\t%d\t%v", or(m.Holder, "-"), or(m.Addr, "-"), m.Epoch, m.Granted))
			})
		},
	}
	f := cmd.Flags()
	f.BoolVar(&take, "take", false, "take or renew the role")
	holderFlag(cmd, &req.Holder)
	f.StringVar(&req.Addr, "addr", "", "address the job's other processes reach the master at")
	f.DurationVar(&ttl, "ttl", 10*time.Second, "lease of the role")
	f.BoolVar(&req.Release, "release", false, "give the role up")
	addClientFlags(cmd, o)
	return cmd
}

func newTaskPServers() *cobra.Command {
	o := &clientOptions{}
	cmd := &cobra.Command{
		Use:   "pservers JOB",
		Short: "List a job's pserver slots",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return call(cmd, o, "", func(ctx context.Context, c *client.Client) (api.PServerList, error) {
				return c.PServers(ctx, args[0])
			}, func(w io.Writer, l api.PServerList) error {
				rows := []string{"INDEX\tHOLDER\tADDR\tEPOCH\tCHECKPOINT"}
				for _, p := range l.PServers {
					rows = append(rows, fmt.Sprintf("%d\t%s\t%s\t%d\t%s", p.Index, or(p.Holder, "-"), or(p.Addr, "-"), p.Epoch, or(p.Checkpoint, "-")))
				}
				if err := table(w, rows...); err != nil {
					return err
				}
				_, err := fmt.Fprintf(w, "%d held\n", l.Live)
				return err
			})
		},
	}
	addClientFlags(cmd, o)
	return cmd
}

func newTaskClaim() *cobra.Command {
	o := &clientOptions{}
	var (
		req api.PServerClaim
		ttl time.Duration
	)
	cmd := &cobra.Command{
		Use:   "claim-pserver JOB --desired N [--holder H --addr A --ttl D]",
		Short: "Claim the smallest free pserver slot below --desired; prints INDEX and its checkpoint path",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			req.TTLS = ttl.Seconds()
			return call(cmd, o, "", func(ctx context.Context, c *client.Client) (api.PServer, error) {
				return c.ClaimPServer(ctx, args[0], req)
			}, func(w io.Writer, p api.PServer) error {
				_, err := fmt.Fprintf(w, "%d %s\n", p.Index, p.Checkpoint)
				return err
			})
		},
	}
	f := cmd.Flags()
	holderFlag(cmd, &req.Holder)
	f.StringVar(&req.Addr, "addr", "", "address trainers reach this pserver at")
	f.IntVar(&req.Desired, "desired", 1, "the job's pserver count")
	f.DurationVar(&ttl, "ttl", 10*time.Second, "lease of the slot")
	addClientFlags(cmd, o)
	return cmd
}

// or returns s, or def when s is empty.
func or(s, def string) string {
	if s == "" {
		return def
	}
	return s
}
