// Package machine is what a node agent's machine has and measures: its
// GPUs (declared, "v100=4", or discovered through NVML), their and the
// node's power (samplers: NVML, a BMC through Redfish, a file, an HTTP
// endpoint), its CPUs and memory (HostResources, NodeCapacity), its Unix
// accounts (the accounts replicas run as) and its distance to data
// endpoints (Probe). Package agent calls it; the command line builds the
// agent's GPUs and samplers with it.
package machine
