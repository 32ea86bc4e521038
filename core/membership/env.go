package membership

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// Env is a process environment as variable name → value.
type Env map[string]string

// Pairs returns e as "NAME=value" strings sorted by name, the form of
// os/exec.Cmd.Env.
func (e Env) Pairs() []string {
	out := make([]string, 0, len(e))
	for k, v := range e {
		out = append(out, k+"="+v)
	}
	slices.Sort(out)
	return out
}

// Env returns the environment of the training process of local rank
// localRank on host, for PyTorch distributed (init_method "env://") and
// tools that read the same variables:
//
//	MASTER_ADDR, MASTER_PORT      node rank 0's host name, port
//	WORLD_SIZE, RANK              all GPUs of the job; this process's global rank
//	LOCAL_WORLD_SIZE, LOCAL_RANK  GPUs on this host; this process's local rank
//	NNODES, NODE_RANK             hosts of the job; this host's node rank
//	CUDA_VISIBLE_DEVICES          the host's device indices in local-rank order
//	CUDA_DEVICE_ORDER             PCI_BUS_ID, so indices match NVML and nvidia-smi
//	GPUSCHED_JOB_ID, GPUSCHED_GENERATION
//
// Since CUDA_VISIBLE_DEVICES lists the host's GPUs in local-rank order, the
// process's own GPU is CUDA device LOCAL_RANK (torch.cuda.set_device(LOCAL_RANK)).
// port must be in 1..65535.
func (m Membership) Env(host string, localRank, port int) (Env, error) {
	e, h, first, err := m.common(host, port)
	if err != nil {
		return nil, fmt.Errorf("env of %s local rank %d: %w", host, localRank, err)
	}
	if localRank < 0 || localRank >= len(h.GPUs) {
		return nil, fmt.Errorf("env of job %q on %s: local rank %d not in 0..%d: %w",
			m.Job, host, localRank, len(h.GPUs)-1, ErrLocalRank)
	}
	e["RANK"] = strconv.Itoa(first + localRank)
	e["LOCAL_RANK"] = strconv.Itoa(localRank)
	return e, nil
}

// NodeEnv returns the environment of the one launcher (torchrun) that runs
// on host and spawns LOCAL_WORLD_SIZE workers there. It holds the variables
// of Env except RANK and LOCAL_RANK (the launcher sets those for each
// worker), plus torchrun's own settings, which torchrun reads from PET_*
// variables when they are not given as flags:
//
//	PET_NNODES, PET_NODE_RANK, PET_NPROC_PER_NODE, PET_MASTER_ADDR, PET_MASTER_PORT
//
// PET_NPROC_PER_NODE (= LOCAL_WORLD_SIZE) is the --nproc_per_node value.
// TorchrunArgs gives the same settings as flags. port must be in 1..65535.
func (m Membership) NodeEnv(host string, port int) (Env, error) {
	e, _, _, err := m.common(host, port)
	if err != nil {
		return nil, fmt.Errorf("node env of %s: %w", host, err)
	}
	for _, k := range []string{"NNODES", "NODE_RANK", "MASTER_ADDR", "MASTER_PORT"} {
		e["PET_"+k] = e[k]
	}
	e["PET_NPROC_PER_NODE"] = e["LOCAL_WORLD_SIZE"]
	return e, nil
}

// TorchrunArgs returns the torchrun flags for the launcher on host:
// --nnodes, --node_rank, --nproc_per_node, --master_addr and --master_port,
// each as one "--flag=value" string, spelt with underscores: the only
// spelling of torchrun 1.x (Debian's python3-torch is 1.13), which
// torchrun 2.x accepts too. port must be in 1..65535.
func (m Membership) TorchrunArgs(host string, port int) ([]string, error) {
	e, _, _, err := m.common(host, port)
	if err != nil {
		return nil, fmt.Errorf("torchrun args of %s: %w", host, err)
	}
	return []string{
		"--nnodes=" + e["NNODES"],
		"--node_rank=" + e["NODE_RANK"],
		"--nproc_per_node=" + e["LOCAL_WORLD_SIZE"],
		"--master_addr=" + e["MASTER_ADDR"],
		"--master_port=" + e["MASTER_PORT"],
	}, nil
}

// common returns the variables shared by Env and NodeEnv, host's entry and
// the global rank of its local rank 0.
func (m Membership) common(host string, port int) (Env, Host, int, error) {
	if port < 1 || port > 65535 {
		return nil, Host{}, 0, fmt.Errorf("port %d: %w", port, ErrBadPort)
	}
	if err := m.Validate(); err != nil {
		return nil, Host{}, 0, err
	}
	node, first, err := m.NodeRank(host)
	if err != nil {
		return nil, Host{}, 0, err
	}
	h := m.Hosts[node]
	devices := make([]string, len(h.GPUs))
	for i, gpu := range h.GPUs {
		devices[i] = strconv.Itoa(gpu)
	}
	e := Env{
		"MASTER_ADDR":          m.Hosts[0].Name,
		"MASTER_PORT":          strconv.Itoa(port),
		"WORLD_SIZE":           strconv.Itoa(m.WorldSize()),
		"LOCAL_WORLD_SIZE":     strconv.Itoa(len(h.GPUs)),
		"NNODES":               strconv.Itoa(len(m.Hosts)),
		"NODE_RANK":            strconv.Itoa(node),
		"CUDA_VISIBLE_DEVICES": strings.Join(devices, ","),
		"CUDA_DEVICE_ORDER":    "PCI_BUS_ID",
		"GPUSCHED_JOB_ID":      m.Job,
		"GPUSCHED_GENERATION":  strconv.Itoa(m.Generation),
	}
	return e, h, first, nil
}
