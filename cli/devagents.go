package cli

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/spf13/cobra"

	"github.com/gpusched/gpusched/config"
	"github.com/gpusched/gpusched/service/agent"
	"github.com/gpusched/gpusched/service/api"
	"github.com/gpusched/gpusched/service/machine"
	"github.com/gpusched/gpusched/service/server"
)

// powerOptions are the agent flags of power sources and probes, shared by
// agent and dev.
type powerOptions struct {
	redfish, file, http    string
	powerEvery, probeEvery time.Duration
}

// addPowerFlags defines them on cmd (--power-redfish only for agent).
func addPowerFlags(cmd *cobra.Command, o *powerOptions, redfish bool) {
	f := cmd.Flags()
	if redfish {
		f.StringVar(&o.redfish, "power-redfish", "", "the node BMC's Redfish Chassis Power URL, read for the node's power draw\n"+
			"(basic auth from $"+machine.EnvRedfishUser+" and $"+machine.EnvRedfishPassword+"); GPU power comes from NVML when present")
	}
	f.StringVar(&o.file, "power-file", "", "a file holding the node's power (watts, or {\"node_w\":W,\"gpus\":[...]}), read at every reading; "+
		machine.NodePlaceholder+" is replaced by the node's name (docs/AGENT.md)")
	f.StringVar(&o.http, "power-http", "", "an HTTP endpoint answering with the node's power, asked with ?node=NAME&load=L at every reading; "+
		machine.NodePlaceholder+" is replaced by the node's name (docs/AGENT.md)")
	f.DurationVar(&o.powerEvery, "power-interval", agent.DefaultPowerEvery, "how often the node's power is read")
	f.DurationVar(&o.probeEvery, "probe-interval", agent.DefaultProbeEvery, "how often each data endpoint the server names is probed (±20% jitter)")
}

// sources returns the power sources of the flags.
func (o *powerOptions) sources() machine.PowerSources {
	return machine.PowerSources{Redfish: o.redfish, File: o.file, HTTP: o.http}
}

// devNode is one agent `gpusched dev` runs: its name (empty: the host
// name), GPUs and data directory.
type devNode struct {
	name string
	gpus []api.GPU
	dir  string
}

// clusterNodes returns the nodes of a cluster file as dev runs them: one
// agent per node, named as in the file, with its GPUs (device indices
// 0..n-1, the type's memory), its data in DATA/agents/NAME.
func clusterNodes(path, data string) ([]devNode, error) {
	raw, err := os.ReadFile(path)
	if err != nil {
		return nil, badInput("--cluster: %w", err)
	}
	c, err := config.ParseClusterFile(path, raw)
	if err != nil {
		return nil, usageError{err}
	}
	out := make([]devNode, len(c.Nodes))
	for i, n := range c.Nodes {
		t := c.Types[n.Type]
		gpus := make([]api.GPU, n.GPUs)
		for g := range gpus {
			gpus[g] = api.GPU{Index: g, Type: t.Name, MemMiB: t.MemMiB}
		}
		out[i] = devNode{name: n.Name, gpus: gpus, dir: filepath.Join(data, "agents", n.Name)}
	}
	return out, nil
}

// newDevAgents builds the agents of nodes for srv, served at url (with its
// TLS and credentials: secureAgent).
func newDevAgents(o *devOptions, srv *server.Server, nodes []devNode, url string, logger *slog.Logger) ([]*agent.Agent, error) {
	var out []*agent.Agent
	for _, n := range nodes {
		alog := logger.With("component", "agent")
		name := n.name
		if name == "" {
			name = o.name
		}
		cfg := agent.Config{Server: url, Name: name, DataDir: n.dir, GPUs: n.gpus, Capacity: o.capa, Logger: alog,
			StopOnExit: o.stopOnExit, PowerEvery: o.power.powerEvery, ProbeEvery: o.power.probeEvery}
		if n.name != "" {
			cfg.Addr = "127.0.0.1" // several agents on this machine: reach each other by loopback
		}
		host := name
		if host == "" {
			host, _ = os.Hostname()
		}
		cfg.PowerSamplers = o.power.sources().Samplers(host, n.gpus, os.Getenv, alog)
		if err := o.secureAgent(srv, url, &cfg); err != nil {
			return nil, err
		}
		if err := o.devRunAs(srv, &cfg); err != nil {
			return nil, err
		}
		a, err := agent.New(cfg)
		if err != nil {
			if errors.Is(err, agent.ErrInvalidConfig) {
				return nil, usageError{err}
			}
			return nil, err
		}
		out = append(out, a)
	}
	return out, nil
}

// runAgents runs every agent until ctx ends or one fails, and returns the
// first error.
func runAgents(ctx context.Context, agents []*agent.Agent) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var (
		wg    sync.WaitGroup
		mu    sync.Mutex
		first error
	)
	for _, a := range agents {
		wg.Go(func() {
			if err := a.Run(ctx); err != nil {
				mu.Lock()
				if first == nil {
					first = fmt.Errorf("agent %s: %w", a.Name(), err)
				}
				mu.Unlock()
				cancel()
			}
		})
	}
	wg.Wait()
	return first
}

// devRunAs makes dev's agents behave as `gpusched agent` as root when the
// server requires authentication and dev runs as root: several people
// share the machine, so each job runs as its owner's Unix account, in a
// cgroup of its own when the machine has them (agent.ConfineAuto), and
// the data directory becomes 0711 (its files stay private: 0600 and 0700)
// so that they reach their replicas' directories. Without authentication
// (one person's workstation) or as an ordinary user, replicas run as dev.
func (o *devOptions) devRunAs(srv *server.Server, cfg *agent.Config) error {
	if srv.Tokens() == nil || os.Geteuid() != 0 {
		return nil
	}
	cfg.RunAs, cfg.Confine = agent.RunAsOwner, agent.ConfineAuto
	data := filepath.Clean(o.server.data)
	for d := filepath.Dir(cfg.DataDir); d == data || strings.HasPrefix(d, data+string(filepath.Separator)); d = filepath.Dir(d) {
		if err := os.Chmod(d, 0o711); err != nil {
			return fmt.Errorf("data directory: %w", err)
		}
	}
	return nil
}
