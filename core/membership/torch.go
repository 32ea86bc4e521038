package membership

import (
	"strconv"
	"strings"
)

// Defaults of torchrun's elastic settings for elastic jobs (TorchElastic).
const (
	// torchMaxRestarts is PET_MAX_RESTARTS: torchrun counts every shrink
	// and every node loss as a failure of its workers, and gives up once
	// its restarts are spent (its own default is 0).
	torchMaxRestarts = 100
	// torchRdzvConf is PET_RDZV_CONF, is_host aside: once the fewest
	// nodes have joined a rendezvous round, torchrun waits
	// last_call_timeout seconds for more (its default, 30 s, is paid on
	// every resize that does not reach the job's maximum).
	torchRdzvConf = "last_call_timeout=3"
	// torchMonitorInterval is PET_MONITOR_INTERVAL, in seconds: how often
	// torchrun looks for failed workers and for nodes waiting to join
	// (its default, 5 s, delays every resize by up to that much).
	torchMonitorInterval = "1"
)

// TorchElastic returns the torchrun settings, as the PET_* variables
// torchrun reads for the flags it is not given, that make `torchrun
// train.py` an elastic launcher for elastic job id (minGPUs < maxGPUs)
// whose node rank 0 is reached at master: the c10d rendezvous at
// master:port, the job's id as the rendezvous id, between 1 node and
// maxGPUs nodes, and the restarts and timeouts above. The rendezvous's
// store is hosted by node rank 0's torchrun, said explicitly (is_host in
// PET_RDZV_CONF; rank0 for that replica): by itself torchrun hosts it on
// whichever node's address matches the endpoint first, which need not be
// node rank 0 where several nodes share a host or an address. They
// replace the membership's static PET_NNODES; the job spec's env
// overrides each of them, and torchrun's flags override the environment.
// A rigid job gets none (the static rendezvous of the membership's PET_*
// variables).
func TorchElastic(id string, port, minGPUs, maxGPUs int, master string, rank0 bool) map[string]string {
	if minGPUs >= maxGPUs {
		return nil
	}
	host := "0"
	if rank0 {
		host = "1"
	}
	return map[string]string{
		"PET_RDZV_BACKEND":     "c10d",
		"PET_RDZV_ENDPOINT":    joinHostPort(master, port),
		"PET_RDZV_ID":          id,
		"PET_NNODES":           "1:" + strconv.Itoa(maxGPUs),
		"PET_MAX_RESTARTS":     strconv.Itoa(torchMaxRestarts),
		"PET_RDZV_CONF":        torchRdzvConf + ",is_host=" + host,
		"PET_MONITOR_INTERVAL": torchMonitorInterval,
	}
}

// joinHostPort is net.JoinHostPort (the core imports no net): host:port,
// a host with a colon (an IPv6 literal) in brackets.
func joinHostPort(host string, port int) string {
	if strings.Contains(host, ":") {
		host = "[" + host + "]"
	}
	return host + ":" + strconv.Itoa(port)
}
