package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/url"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"github.com/spf13/cobra"

	"github.com/gpusched/gpusched/config"
	"github.com/gpusched/gpusched/core/model"
	"github.com/gpusched/gpusched/service/agent"
	"github.com/gpusched/gpusched/service/client"
	"github.com/gpusched/gpusched/service/machine"
)

// agentOptions are the flags of `gpusched agent`.
type agentOptions struct {
	server, name, addr, data, gpus string
	power                          powerOptions
	stopOnExit                     bool
	verbose                        bool
	joinToken, ca                  string
	capacity                       capacityOptions
	userMap                        string
	confine                        confineOptions
}

// capacityOptions are the agent flags of what its node offers besides
// GPUs: --cpus and --memory (default: detected), --reserve and the
// repeatable --resource NAME=N.
type capacityOptions struct {
	cpus, memory, reserve string
	resources             []string
}

// addCapacityFlags defines them on cmd.
func addCapacityFlags(cmd *cobra.Command, o *capacityOptions) {
	f := cmd.Flags()
	f.StringVar(&o.cpus, "cpus", "", "the node's CPUs offered to jobs, cores or millicores (default: detected, the CPUs the agent may run on)")
	f.StringVar(&o.memory, "memory", "", "the node's memory offered to jobs, e.g. 512Gi (default: detected on Linux, the physical memory)")
	f.StringVar(&o.reserve, "reserve", "", "what jobs may not use, kept for the system, e.g. cpu=2,memory=8Gi")
	f.StringArrayVar(&o.resources, "resource", nil, "a named resource the node offers, NAME=N, e.g. rdma/hca=4 (repeatable)")
}

// capacity returns what the node offers jobs besides GPUs
// (machine.NodeCapacity): the detected CPUs and memory or those of the
// flags, less --reserve, plus the --resource ones.
func (o *capacityOptions) capacity() (model.Resources, error) {
	host, err := machine.HostResources()
	if err != nil {
		return nil, err
	}
	for _, f := range []struct{ flag, name, v string }{{"cpus", model.ResourceCPU, o.cpus}, {"memory", model.ResourceMemory, o.memory}} {
		if f.v == "" {
			continue
		}
		if host[f.name], err = config.ParseAmount(f.name, f.v); err != nil {
			return nil, badInput("--%s: %w", f.flag, err)
		}
	}
	reserve, err := config.ParseResourceList(o.reserve)
	if err != nil {
		return nil, badInput("--reserve %q: %w", o.reserve, err)
	}
	extra, err := config.ParseResourceList(strings.Join(o.resources, ","))
	if err != nil {
		return nil, badInput("--resource: %w", err)
	}
	capa, err := machine.NodeCapacity(host, reserve, extra)
	if err != nil {
		return nil, badInput("%w", err)
	}
	return capa, nil
}

// envJoinToken holds the agent's join token when --join-token is not given.
const envJoinToken = "GPUSCHED_JOIN_TOKEN"

func newAgentCommand() *cobra.Command {
	o := &agentOptions{}
	cmd := &cobra.Command{
		Use: "agent --server URL [--join-token T] [--ca FILE] [--name NODE] [--data DIR] [--gpus auto|TYPE=N,...] " +
			"[--user-map FILE] [--confine auto|require|off] [--default-memory Q] [--cpus N] [--memory Q] [--reserve cpu=N,memory=Q] [--resource NAME=N]... [--power-redfish URL | --power-file FILE | --power-http URL]",
		Short: "Run this machine's node agent: offer its GPUs and run the replicas the server assigns",
		Long: "agent registers this machine's GPUs with the scheduler service, runs the job\n" +
			"replicas the server assigns to it (each in its own process group, output in\n" +
			"DIR/replicas/ID/output.log), reports their exits and ships their output.\n" +
			"It survives server restarts: replicas keep running and results are reported\n" +
			"once the server is back.\n\n" +
			"On SIGINT or SIGTERM the agent exits and leaves its replicas running; an agent\n" +
			"started later on the same --data adopts them. --stop-replicas-on-exit stops\n" +
			"them first (SIGTERM, grace period, SIGKILL). docs/AGENT.md has the details.\n\n" +
			"Besides its GPUs the node offers jobs its CPUs and memory (detected, or --cpus\n" +
			"and --memory) less what --reserve keeps for the system, and the named resources\n" +
			"of --resource: jobs that ask for CPUs, memory or resources (submit --cpus,\n" +
			"--memory, --resource) go only where enough of them is left.\n\n" +
			"An agent running as root starts each replica as its job owner's Unix account\n" +
			"(uid, groups, HOME), the account of the same name unless --user-map FILE maps\n" +
			"the owner to another account (and extra groups); a job whose owner has no\n" +
			"account on the node fails there, and none runs as root unless the map says so.\n" +
			"An agent not running as root runs every replica as itself.\n\n" +
			"With --confine auto (the default) an agent running as root puts each replica\n" +
			"in a cgroup of its own (v2, else v1): its job's CPUs and memory (or\n" +
			"--default-memory) as limits, at most --pids-max tasks, and only its own GPUs'\n" +
			"/dev/nvidiaN among the node's GPUs; an out-of-memory kill fails the job saying\n" +
			"so. Without cgroups it says so at start and runs replicas unconfined; --confine\n" +
			"require refuses to start instead. See docs/SECURITY.md.",
		Example: "  gpusched agent --server https://head:7070 --join-token \"$(cat join.token)\" --ca ca.crt\n" +
			"  gpusched agent --server http://head:7070\n" +
			"  gpusched agent --server http://head:7070 --name gpu7 --gpus v100=8\n" +
			"  gpusched agent --server http://head:7070 --reserve cpu=2,memory=8Gi --resource rdma/hca=4\n" +
			"  GPUSCHED_SERVER=http://head:7070 gpusched agent --data /var/lib/gpusched\n" +
			"  sudo gpusched agent --server http://head:7070 --data /var/lib/gpusched --user-map /etc/gpusched/users.yaml",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runAgent(cmd.Context(), o, cmd.ErrOrStderr())
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.server, "server", "", "scheduler service URL, or a comma-separated list of the servers sharing an etcd store (default $"+client.EnvServer+", else "+client.DefaultServer+")")
	f.StringVar(&o.name, "name", "", "node name, unique in the cluster (default: the host name)")
	f.StringVar(&o.addr, "addr", "", "host name or address other nodes reach this one by (default: --name)")
	f.StringVar(&o.data, "data", "", "data directory for replica output and records (default: <user cache dir>/gpusched/agent-NAME)")
	f.StringVar(&o.gpus, "gpus", machine.AutoGPUs, "the node's GPUs: auto (discover with NVML) or TYPE=N, e.g. v100=4")
	f.BoolVar(&o.stopOnExit, "stop-replicas-on-exit", false, "stop every running replica before the agent exits")
	addCapacityFlags(cmd, &o.capacity)
	addConfineFlags(cmd, &o.confine)
	addPowerFlags(cmd, &o.power, true)
	f.BoolVarP(&o.verbose, "verbose", "v", false, "log debug messages")
	f.StringVar(&o.joinToken, "join-token", "", "join token for a server that requires authentication (default $"+envJoinToken+
		"); the node's own credential is then kept in DIR/node.token")
	f.StringVar(&o.ca, "ca", "", "CA certificate to trust for an https server, e.g. its DATA/tls/ca.crt (default $"+client.EnvCA+")")
	f.StringVar(&o.userMap, "user-map", "", "YAML file mapping gpusched users to Unix accounts and extra groups (agent running as root; "+
		"default: each job runs as the account named like its owner, never root)")
	return cmd
}

// runAs returns whose accounts the agent runs replicas as: as root, each
// job owner's (through --user-map when given); otherwise the agent's own.
func (o *agentOptions) runAs() (agent.RunAs, *config.UserMap, error) {
	if os.Geteuid() != 0 {
		if o.userMap != "" {
			return 0, nil, badInput("--user-map %s: the agent runs as uid %d, not root, so replicas run as its own account",
				o.userMap, os.Geteuid())
		}
		return agent.RunAsAgent, nil, nil
	}
	if o.userMap == "" {
		return agent.RunAsOwner, nil, nil
	}
	m, err := config.LoadUserMap(o.userMap)
	if err != nil {
		return 0, nil, badInput("--user-map: %w", err)
	}
	return agent.RunAsOwner, m, nil
}

// runAgent resolves the node's GPUs, builds the agent and runs it until
// SIGINT or SIGTERM; a second signal (while replicas are being stopped, with
// --stop-replicas-on-exit) kills the agent without waiting.
func runAgent(ctx context.Context, o *agentOptions, stderr io.Writer) error {
	gpus, err := machine.ResolveGPUs(o.gpus)
	if err != nil {
		if errors.Is(err, machine.ErrNoGPUs) {
			return err // the machine, not the flag: exit 1
		}
		return usageError{err}
	}
	capa, err := o.capacity.capacity()
	if err != nil {
		return err
	}
	runAs, userMap, err := o.runAs()
	if err != nil {
		return err
	}
	level := slog.LevelInfo
	if o.verbose {
		level = slog.LevelDebug
	}
	for flag, v := range map[string]string{"power-redfish": o.power.redfish, "power-http": o.power.http} {
		if u, err := url.Parse(v); v != "" && (err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "") {
			return badInput("--%s %q: want an http(s) URL such as https://bmc/redfish/v1/Chassis/1/Power", flag, v)
		}
	}
	name := o.name
	if name == "" {
		name, _ = os.Hostname()
	}
	logger := slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: level}))
	ca := first(o.ca, os.Getenv(client.EnvCA))
	hc, err := client.Options{CAFile: ca}.HTTPClient()
	if err != nil {
		return badInput("--ca: %w", err)
	}
	cfg := agent.Config{
		Client:        hc,
		JoinToken:     first(o.joinToken, os.Getenv(envJoinToken)),
		CAFile:        ca,
		Server:        client.ServerURL(o.server, os.Getenv),
		Name:          o.name,
		Addr:          o.addr,
		DataDir:       o.data,
		GPUs:          gpus,
		Capacity:      capa,
		Logger:        logger,
		StopOnExit:    o.stopOnExit,
		PowerSamplers: o.power.sources().Samplers(name, gpus, os.Getenv, logger),
		PowerEvery:    o.power.powerEvery,
		ProbeEvery:    o.power.probeEvery,
		RunAs:         runAs,
		UserMap:       userMap,
	}
	if err := o.confine.apply(&cfg); err != nil {
		return err
	}
	a, err := agent.New(cfg)
	if errors.Is(err, agent.ErrInvalidConfig) {
		return usageError{err}
	}
	if err != nil {
		return err
	}
	if ctx == nil {
		ctx = context.Background()
	}
	ctx, stop := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
	defer stop()
	go func() {
		<-ctx.Done()
		stop() // a second signal ends the agent at once
	}()
	if err := a.Run(ctx); err != nil {
		return fmt.Errorf("agent: %w", err)
	}
	return nil
}
