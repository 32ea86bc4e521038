package cli

import (
	"github.com/spf13/cobra"

	"github.com/gpusched/gpusched/config"
	"github.com/gpusched/gpusched/core/model"
	"github.com/gpusched/gpusched/service/agent"
)

// confineOptions are the agent flags of how replicas are confined:
// --confine, --default-memory, --pids-max and --device-dir.
type confineOptions struct {
	mode, defaultMemory, deviceDir string
	pidsMax                        int64
}

// addConfineFlags defines them on cmd.
func addConfineFlags(cmd *cobra.Command, o *confineOptions) {
	f := cmd.Flags()
	f.StringVar(&o.mode, "confine", "auto", "run each replica in a cgroup of its own (CPU, memory and task limits, only its GPUs' devices): "+
		"auto (when the agent can: root, cgroup v2 or v1), require (refuse to start otherwise) or off")
	f.StringVar(&o.defaultMemory, "default-memory", "", "memory limit of a confined replica whose job asks for no memory, e.g. 16Gi (default: none)")
	f.Int64Var(&o.pidsMax, "pids-max", agent.DefaultPidsMax, "most tasks (processes and threads) of a confined replica")
	f.StringVar(&o.deviceDir, "device-dir", "/dev", "where the node's device nodes (nvidiaN, nvidiactl, ...) are")
}

// apply sets the confinement fields of cfg.
func (o *confineOptions) apply(cfg *agent.Config) error {
	switch o.mode {
	case "auto":
		cfg.Confine = agent.ConfineAuto
	case "require":
		cfg.Confine = agent.ConfineRequire
	case "off":
		cfg.Confine = agent.ConfineOff
	default:
		return badInput("--confine %q: want auto, require or off", o.mode)
	}
	if o.defaultMemory != "" {
		m, err := config.ParseAmount(model.ResourceMemory, o.defaultMemory)
		if err != nil || m <= 0 {
			return badInput("--default-memory %q: want an amount of memory such as 16Gi", o.defaultMemory)
		}
		cfg.DefaultMemory = m
	}
	if o.pidsMax <= 0 {
		return badInput("--pids-max %d: want at least 1", o.pidsMax)
	}
	cfg.PidsMax, cfg.DeviceDir = o.pidsMax, o.deviceDir
	return nil
}
