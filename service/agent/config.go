package agent

import (
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"time"
	"unicode"

	"github.com/gpusched/gpusched/config"
	"github.com/gpusched/gpusched/core/model"
	"github.com/gpusched/gpusched/service/api"
	svcclient "github.com/gpusched/gpusched/service/client"
	"github.com/gpusched/gpusched/service/machine"
)

// DefaultRetention is how long the directory of a finished, acknowledged
// replica is kept when Config.Retention is zero.
const DefaultRetention = 7 * 24 * time.Hour

// Config configures an Agent. Server and GPUs are required.
type Config struct {
	// Server is the scheduler's base URL, e.g. "http://head:7070", or a
	// comma-separated list of the servers that share an etcd store: the
	// agent follows the leader's redirects and fails over to the next
	// server on its own (client.Failover).
	Server string
	// Name is the node's name, unique in the cluster; default: the host
	// name. It must not be empty or hold ':', ',', white space or control
	// characters (it goes into host lists).
	Name string
	// Addr is the host name or address other nodes reach this one by (a
	// multi-node job's MASTER_ADDR); default: Name.
	Addr string
	// DataDir holds the replicas' directories; default: DefaultDataDir(Name).
	// A relative one is made absolute.
	DataDir string
	// GPUs are the node's GPUs (ResolveGPUs): at least one, all of one
	// type.
	GPUs []api.GPU
	// Capacity is what the node offers jobs besides its GPUs, registered
	// with the server (api.Register.Capacity): its CPUs in millicores and
	// memory in bytes less what the admin reserves, and named resources
	// (NodeCapacity, HostResources). Nil: none reported, and the server
	// places no job that asks for CPUs, memory or named resources here.
	Capacity model.Resources
	// Client makes the requests to the server; default: a plain
	// http.Client (requests are bounded by their contexts).
	Client *http.Client
	// Logger receives the agent's logs; default: discard.
	Logger *slog.Logger
	// StopOnExit makes Run stop every running replica (SIGTERM, grace
	// period, SIGKILL) before it returns. By default replicas keep running
	// when the agent stops, and the next agent on the same DataDir adopts
	// them.
	StopOnExit bool
	// PowerSamplers read the node's power for its status reports
	// (docs/AGENT.md, power readings; PowerSamplers builds the usual
	// ones); none: no readings. The agent closes those that are
	// io.Closers when Run returns.
	PowerSamplers []machine.PowerSampler
	// PowerEvery is how often the samplers are read; 0 means
	// DefaultPowerEvery.
	PowerEvery time.Duration
	// ProbeEvery is how often each data endpoint the server names is
	// probed (with ±20 % jitter; docs/AGENT.md, "RTT probes"); 0 means
	// DefaultProbeEvery.
	ProbeEvery time.Duration
	// ProbeTimeout bounds one probe; 0 means DefaultProbeTimeout.
	ProbeTimeout time.Duration
	// Shim is the command, with its first arguments, that runs a replica's
	// shim (RunShim): the agent appends the shim's arguments. Default: this
	// program's executable (os.Executable) and "shim", the hidden `gpusched
	// shim` command; a program that embeds an agent must run RunShim when
	// started with the argument "shim".
	Shim []string
	// Retention is how long the directory of a finished replica whose
	// result and output the server has is kept; it is pruned when the
	// agent starts. Zero means DefaultRetention; negative keeps them all.
	Retention time.Duration
	// JoinToken registers the node with a server that requires
	// authentication (docs/SECURITY.md): the server answers with the
	// node's own credential, which the agent keeps in DataDir/node.token
	// and uses from then on. Needed only until the node has a credential.
	JoinToken string
	// Credential is the node's credential when the caller has one (gpusched
	// dev mints one for its own agent); otherwise DataDir/node.token.
	Credential string
	// CAFile is the CA certificate the replicas' clients trust (set as
	// GPUSCHED_CA in their environment, for gpusched hostfile); the agent's
	// own trust is in Client.
	CAFile string
	// RunAs says whose Unix account replicas run as: RunAsAgent (the zero
	// value, the agent's own) or RunAsOwner (each job owner's account),
	// which needs root (docs/SECURITY.md, "On the nodes").
	RunAs RunAs
	// UserMap maps job owners to Unix accounts and extra groups under
	// RunAsOwner (config.LoadUserMap); nil: every owner runs as the account
	// of the same name, never root.
	UserMap *config.UserMap
	// Confine says whether each replica runs in a cgroup of its own:
	// ConfineOff (the zero value), ConfineAuto or ConfineRequire
	// (docs/SECURITY.md, "On the nodes").
	Confine Confine
	// DefaultMemory is the memory limit, in bytes, of a confined replica
	// whose job asks for no memory; 0: none.
	DefaultMemory int64
	// PidsMax bounds the tasks of each confined replica; 0 means
	// DefaultPidsMax.
	PidsMax int64
	// DeviceDir is where the node's device nodes are (/dev/nvidiaN,
	// /dev/nvidiactl, ...); default "/dev". A confined replica may open
	// only its own GPUs' nodes of those there (confine.DeviceRules).
	DeviceDir string
}

// DefaultDataDir is the data directory of the agent for node name when
// --data is not given: <user cache dir>/gpusched/agent-<name> (on Linux
// ~/.cache/gpusched/agent-<name>), or the same under the temporary
// directory when there is no user cache directory. The agent's data can be
// re-created: the server has every result and the output it acknowledged.
func DefaultDataDir(name string) string {
	base, err := os.UserCacheDir()
	if err != nil {
		base = os.TempDir()
	}
	return filepath.Join(base, "gpusched", "agent-"+name)
}

// withDefaults returns cfg with its defaults filled in, or an error naming
// the first invalid field.
func (cfg Config) withDefaults() (Config, error) {
	servers, err := svcclient.ParseServers(cfg.Server)
	if cfg.Server == "" || err != nil {
		return cfg, fmt.Errorf("server URL %q: want http://HOST:PORT[,http://HOST:PORT...]", cfg.Server)
	}
	if cfg.Name == "" {
		if cfg.Name, err = os.Hostname(); err != nil {
			return cfg, fmt.Errorf("node name: %w", err)
		}
	}
	if err := checkHostName(cfg.Name); err != nil {
		return cfg, fmt.Errorf("node name %q: %w", cfg.Name, err)
	}
	if cfg.Addr == "" {
		cfg.Addr = cfg.Name
	}
	if err := checkHostName(cfg.Addr); err != nil {
		return cfg, fmt.Errorf("node address %q: %w", cfg.Addr, err)
	}
	if cfg.DataDir == "" {
		cfg.DataDir = DefaultDataDir(cfg.Name)
	}
	if cfg.DataDir, err = filepath.Abs(cfg.DataDir); err != nil {
		return cfg, fmt.Errorf("data directory: %w", err)
	}
	if len(cfg.Shim) == 0 {
		exe, err := os.Executable()
		if err != nil {
			return cfg, fmt.Errorf("shim: the agent's own executable: %w", err)
		}
		cfg.Shim = []string{exe, "shim"}
	}
	if cfg.Shim[0] == "" {
		return cfg, errors.New("shim: empty command")
	}
	if err := checkRunAs(cfg); err != nil {
		return cfg, err
	}
	if err := checkConfine(&cfg); err != nil {
		return cfg, err
	}
	if err := machine.ValidateGPUs(cfg.GPUs); err != nil {
		return cfg, fmt.Errorf("GPUs: %w", err)
	}
	if err := machine.CheckCapacity(cfg.Capacity); err != nil {
		return cfg, fmt.Errorf("capacity: %w", err)
	}
	if cfg.Client == nil {
		cfg.Client = &http.Client{}
	}
	if cfg.Client, err = failoverClient(cfg.Client, servers); err != nil {
		return cfg, err
	}
	cfg.Server = strings.Join(servers, ",") // replicas get the whole list as $GPUSCHED_SERVER
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	if cfg.Retention == 0 {
		cfg.Retention = DefaultRetention
	}
	for _, d := range []struct {
		name string
		v    *time.Duration
		def  time.Duration
	}{{"power interval", &cfg.PowerEvery, DefaultPowerEvery}, {"probe interval", &cfg.ProbeEvery, DefaultProbeEvery},
		{"probe timeout", &cfg.ProbeTimeout, DefaultProbeTimeout}} {
		if *d.v == 0 {
			*d.v = d.def
		}
		if *d.v < 10*time.Millisecond {
			return cfg, fmt.Errorf("%s %s: want at least 10ms", d.name, *d.v)
		}
	}
	return cfg, nil
}

// checkRunAs checks cfg.RunAs and cfg.UserMap: RunAsOwner needs root and
// the data directory reachable by other accounts; a user map needs
// RunAsOwner.
func checkRunAs(cfg Config) error {
	switch cfg.RunAs {
	case RunAsAgent:
		if cfg.UserMap != nil {
			return errors.New("user map: replicas run as the agent's own account (only an agent running as root runs them as their owners)")
		}
		return nil
	case RunAsOwner:
		if os.Geteuid() != 0 {
			return fmt.Errorf("run replicas as their owners' accounts: the agent runs as uid %d, not root", os.Geteuid())
		}
		return nil
	}
	return fmt.Errorf("run as %d: want RunAsAgent or RunAsOwner", cfg.RunAs)
}

// checkConfine checks the confinement fields of cfg and fills in their
// defaults.
func checkConfine(cfg *Config) error {
	if cfg.Confine < ConfineOff || cfg.Confine > ConfineRequire {
		return fmt.Errorf("confine %d: want ConfineOff, ConfineAuto or ConfineRequire", cfg.Confine)
	}
	if cfg.DefaultMemory < 0 || cfg.PidsMax < 0 {
		return fmt.Errorf("default memory %d, pids max %d: want amounts of at least 0", cfg.DefaultMemory, cfg.PidsMax)
	}
	if cfg.PidsMax == 0 {
		cfg.PidsMax = DefaultPidsMax
	}
	if cfg.DeviceDir == "" {
		cfg.DeviceDir = "/dev"
	}
	return nil
}

// checkHostName reports whether s can go into a host list ("host:slots"
// lines, comma-separated lists): not empty, no ':', ',', white space or
// control characters.
func checkHostName(s string) error {
	if s == "" {
		return errors.New("empty")
	}
	if i := strings.IndexFunc(s, func(r rune) bool {
		return r == ':' || r == ',' || unicode.IsSpace(r) || unicode.IsControl(r)
	}); i >= 0 {
		return fmt.Errorf("holds %q; use a plain host name or address", s[i:i+1])
	}
	return nil
}

// failoverClient returns a copy of hc whose transport goes through a
// svcclient.Failover over servers (redirects followed there, not by hc).
func failoverClient(hc *http.Client, servers []string) (*http.Client, error) {
	f, err := svcclient.NewFailover(servers, hc.Transport)
	if err != nil {
		return nil, fmt.Errorf("server URL: %w", err)
	}
	c := *hc
	c.Transport = f
	c.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	return &c, nil
}
