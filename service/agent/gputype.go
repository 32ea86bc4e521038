package agent

import "github.com/gpusched/gpusched/config"

// TypeFromName maps a GPU's marketing name, as NVML and nvidia-smi report
// it, to gpusched's lower-case GPU type (config.TypeFromName, which the
// Kubernetes mode shares for the nvidia.com/gpu.product label).
func TypeFromName(name string) string { return config.TypeFromName(name) }
