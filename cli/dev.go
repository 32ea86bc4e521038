package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/spf13/cobra"

	"github.com/gpusched/gpusched/core/model"
	"github.com/gpusched/gpusched/service/agent"
	"github.com/gpusched/gpusched/service/api"
	"github.com/gpusched/gpusched/service/machine"
	"github.com/gpusched/gpusched/service/server"
)

// devFallbackGPUs are the GPUs `dev` declares when NVML finds none.
const devFallbackGPUs = "v100=4"

// devOptions are the flags of `gpusched dev`: the server's plus the local
// agent's.
type devOptions struct {
	server     serverOptions
	gpus, name string
	stopOnExit bool
	// power are the local agents' power sources and probe interval.
	power powerOptions
	// capacity gives what each local agent offers besides GPUs; capa is
	// its result.
	capacity capacityOptions
	capa     model.Resources
}

func newDevCommand() *cobra.Command {
	o := &devOptions{}
	cmd := &cobra.Command{
		Use:   "dev [--listen ADDR] [--data DIR] [--gpus auto|TYPE=N,...]",
		Short: "Run the scheduler service and one local agent in one process, nothing to configure",
		Long: "dev runs `gpusched server` and `gpusched agent` for this machine in one process,\n" +
			"with the embedded store in --data: a complete single-node scheduler for a\n" +
			"workstation. --gpus auto (the default) discovers the GPUs with NVML; without\n" +
			"an NVIDIA driver it declares " + devFallbackGPUs + " so that jobs (any command)\n" +
			"can be tried on a machine without GPUs. It prints the URL and a submit example.\n\n" +
			"On SIGINT or SIGTERM it stops the running jobs' processes (SIGTERM, grace\n" +
			"period, SIGKILL) and exits; --stop-replicas-on-exit=false leaves them running,\n" +
			"for the next dev on the same --data to adopt. Jobs stay in the store either way.\n\n" +
			"With --cluster FILE, dev runs one agent for every node the cluster file declares\n" +
			"(its name, GPU type and count; data in DATA/agents/NAME): a whole cluster on one\n" +
			"machine, for trying the energy placer (docs/ENERGY.md, \"Live\").\n\n" +
			"Each local agent offers this machine's CPUs and memory (or --cpus and --memory)\n" +
			"less --reserve, and the --resource ones, as `gpusched agent` does; with\n" +
			"--cluster, every node offers them.",
		Example: "  gpusched dev\n" +
			"  gpusched dev --gpus v100=8 --data /tmp/gpusched\n" +
			"  gpusched dev --listen 127.0.0.1:0 --policy hlas --placer hetero\n" +
			"  gpusched dev --cluster three.yaml --placer energy --power-http http://127.0.0.1:9100/power",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runDev(cmd.Context(), o, cmd.OutOrStdout(), cmd.ErrOrStderr())
		},
	}
	o.server.addFlags(cmd)
	o.server.addSecurityFlags(cmd, false)
	o.server.devAuth = true
	f := cmd.Flags()
	f.Lookup("auth").Usage = "require a bearer token on every request (default: only when --listen is not loopback; the admin token is written to DATA/admin.token)"
	f.Lookup("data").Usage = "data directory: the store, replica logs and the agent's files (default: <user cache dir>/gpusched/dev)"
	f.StringVar(&o.gpus, "gpus", machine.AutoGPUs, "this machine's GPUs: auto (NVML, else "+devFallbackGPUs+") or TYPE=N, e.g. v100=4")
	f.StringVar(&o.name, "name", "", "the local node's name (default: the host name)")
	f.BoolVar(&o.stopOnExit, "stop-replicas-on-exit", true, "stop the running jobs' processes when dev exits")
	addCapacityFlags(cmd, &o.capacity)
	addPowerFlags(cmd, &o.power, false)
	return cmd
}

// devGPUs resolves --gpus; auto falls back to the declared devFallbackGPUs
// when NVML finds no GPU.
func devGPUs(spec string, logger *slog.Logger) ([]api.GPU, error) {
	gpus, err := machine.ResolveGPUs(spec)
	if errors.Is(err, machine.ErrNoGPUs) && spec == machine.AutoGPUs {
		logger.Info("no GPUs discovered; declaring "+devFallbackGPUs, "reason", err)
		return machine.ParseGPUs(devFallbackGPUs)
	}
	if err != nil {
		return nil, usageError{err}
	}
	return gpus, nil
}

// runDev runs the server and the local agent until SIGINT or SIGTERM.
func runDev(ctx context.Context, o *devOptions, stdout, stderr io.Writer) error {
	if ctx == nil {
		ctx = context.Background()
	}
	logger := o.server.logger(stderr)
	if o.server.data == "" {
		dir, err := os.UserCacheDir()
		if err != nil {
			return badInput("--data: no default data directory (%v); give one", err)
		}
		o.server.data = filepath.Join(dir, "gpusched", "dev")
	}
	nodes, err := o.nodes(logger)
	if err != nil {
		return err
	}
	if o.capa, err = o.capacity.capacity(); err != nil {
		return err
	}
	srv, err := o.server.openServer(logger)
	if err != nil {
		return err
	}
	ln, url, err := o.server.listenSecure(srv.WroteAdminToken(), stderr)
	if err != nil {
		_ = srv.Close()
		return err
	}
	agents, err := newDevAgents(o, srv, nodes, localURL(url), logger)
	if err != nil {
		_ = ln.Close()
		_ = srv.Close()
		return err
	}
	url = publicURL(url)
	printDevBanner(stdout, url, o.server.data, nodes)
	if srv.Tokens() != nil {
		login := "  gpusched login --server " + url + " --token \"$(cat " + filepath.Join(o.server.data, "admin.token") + ")\""
		if o.server.sec.selfSigned && strings.HasPrefix(url, "https://") {
			login += " --ca " + filepath.Join(o.server.data, "tls", "ca.crt")
		}
		fmt.Fprintf(stdout, "authentication is on; first:\n%s\n", login)
	}
	ctx, stop := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
	defer stop()
	return runDevParts(ctx, srv, ln, agents, logger)
}

// nodes returns the agents dev runs: one per node of the --cluster file,
// else this machine with --gpus.
func (o *devOptions) nodes(logger *slog.Logger) ([]devNode, error) {
	if path := o.server.live.cluster; path != "" {
		if o.server.given("gpus") || o.server.given("name") {
			return nil, badInput("--cluster declares the nodes: give neither --gpus nor --name with it")
		}
		return clusterNodes(path, o.server.data)
	}
	gpus, err := devGPUs(o.gpus, logger)
	if err != nil {
		return nil, err
	}
	return []devNode{{gpus: gpus, dir: filepath.Join(o.server.data, "agent")}}, nil
}

// printDevBanner tells the user where the server is and how to use it.
func printDevBanner(w io.Writer, url, data string, nodes []devNode) {
	gpus := nodes[0].gpus
	if len(nodes) == 1 {
		fmt.Fprintf(w, "gpusched dev: serving on %s (data in %s, %d %s GPUs)\n", url, data, len(gpus), gpus[0].Type)
	} else {
		total := 0
		for _, n := range nodes {
			total += len(n.gpus)
		}
		fmt.Fprintf(w, "gpusched dev: serving on %s (data in %s, %d nodes, %d GPUs)\n", url, data, len(nodes), total)
	}
	fmt.Fprintf(w, "try:\n  export GPUSCHED_SERVER=%s\n", url)
	fmt.Fprintf(w, "  gpusched submit --name hello --gpus 1 -- sh -c 'echo hello from GPU $CUDA_VISIBLE_DEVICES'\n")
	fmt.Fprintf(w, "  gpusched jobs\n  gpusched logs j1\n")
}

// runDevParts serves srv on ln and runs the agent until ctx ends or either
// fails. The agent stops first, so that the replicas it stops are reported
// to a server still running; then the server shuts down.
func runDevParts(ctx context.Context, srv *server.Server, ln net.Listener, agents []*agent.Agent, logger *slog.Logger) error {
	srvCtx, stopServer := context.WithCancel(context.Background())
	defer stopServer()
	served := make(chan error, 1)
	go func() { served <- serve(srvCtx, srv, ln, logger) }()
	agentCtx, stopAgent := context.WithCancel(ctx)
	defer stopAgent()
	ran := make(chan error, 1)
	go func() { ran <- runAgents(agentCtx, agents) }()
	var err error
	select {
	case err = <-ran:
	case err = <-served: // the server failed before we asked it to stop
		stopAgent()
		if aerr := <-ran; aerr != nil {
			err = errors.Join(err, aerr)
		}
		return err
	}
	stopServer()
	return errors.Join(err, <-served)
}
