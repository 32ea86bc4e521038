package config

import (
	"slices"
	"strings"

	"github.com/gpusched/gpusched/core/model"
)

// mib converts a vendor memory size in GB (treated as GiB, as nvidia-smi
// and schedulers do) to MiB.
func mib(gib int) int { return gib * 1024 }

// Catalog returns the GPU types gpusched knows, as a fresh slice the caller
// may change. Memory is per GPU in MiB (vendor "GB" taken as GiB); TFLOPS is
// the vendor's rated peak FP32 performance per GPU (with boost clock). Names
// are lower case; docs/GPUS.md lists the same table with its sources.
func Catalog() []model.GPUType {
	return []model.GPUType{
		// NVIDIA Tesla K80 datasheet: a board of two GK210 GPUs, 24 GB
		// GDDR5 (12 GB per GPU), 8.73 TFLOPS FP32 per board with GPU Boost.
		// One entry is one GPU die: 12 GiB, 8.73 / 2 = 4.37 TFLOPS.
		{Name: "k80", MemMiB: mib(12), TFLOPS: 4.37},
		// NVIDIA Tesla P100 datasheet: SXM2 (NVLink) 10.6 TFLOPS FP32,
		// 16 GB CoWoS HBM2. Also the Alibaba 2023 trace's "P100".
		{Name: "p100", MemMiB: mib(16), TFLOPS: 10.6},
		// NVIDIA Tesla P100 datasheet: PCIe 9.3 TFLOPS FP32, 16 GB HBM2.
		{Name: "p100-pcie", MemMiB: mib(16), TFLOPS: 9.3},
		// NVIDIA Tesla V100 datasheet: SXM2 15.7 TFLOPS FP32, 16 GB HBM2.
		{Name: "v100", MemMiB: mib(16), TFLOPS: 15.7},
		// NVIDIA Tesla V100 datasheet: PCIe 14 TFLOPS FP32, 16 GB HBM2.
		{Name: "v100-pcie", MemMiB: mib(16), TFLOPS: 14},
		// Alibaba 2023 trace "V100M16": NVIDIA Tesla V100 datasheet, 16 GB
		// HBM2; form factor not published, SXM2 figure (15.7 TFLOPS) used.
		{Name: "v100m16", MemMiB: mib(16), TFLOPS: 15.7},
		// Alibaba 2023 trace "V100M32": NVIDIA Tesla V100 datasheet, 32 GB
		// HBM2; form factor not published, SXM2 figure (15.7 TFLOPS) used.
		{Name: "v100m32", MemMiB: mib(32), TFLOPS: 15.7},
		// NVIDIA T4 Tensor Core GPU datasheet: 8.1 TFLOPS FP32, 16 GB
		// GDDR6. Also the Alibaba 2023 trace's "T4".
		{Name: "t4", MemMiB: mib(16), TFLOPS: 8.1},
		// NVIDIA A10 Tensor Core GPU datasheet: 31.2 TFLOPS FP32, 24 GB
		// GDDR6. Also the Alibaba 2023 trace's "A10".
		{Name: "a10", MemMiB: mib(24), TFLOPS: 31.2},
		// NVIDIA A30 Tensor Core GPU datasheet: 10.3 TFLOPS FP32, 24 GB HBM2.
		{Name: "a30", MemMiB: mib(24), TFLOPS: 10.3},
		// NVIDIA A100 Tensor Core GPU datasheet: 19.5 TFLOPS FP32, 40 GB
		// HBM2 (A100 40GB SXM).
		{Name: "a100", MemMiB: mib(40), TFLOPS: 19.5},
		// NVIDIA A100 Tensor Core GPU datasheet: 19.5 TFLOPS FP32, 80 GB
		// HBM2e (A100 80GB SXM/PCIe).
		{Name: "a100-80", MemMiB: mib(80), TFLOPS: 19.5},
		// NVIDIA L4 Tensor Core GPU datasheet: 30.3 TFLOPS FP32, 24 GB GDDR6.
		{Name: "l4", MemMiB: mib(24), TFLOPS: 30.3},
		// NVIDIA H100 Tensor Core GPU datasheet: H100 SXM 67 TFLOPS FP32,
		// 80 GB HBM3.
		{Name: "h100", MemMiB: mib(80), TFLOPS: 67},
		// NVIDIA H100 Tensor Core GPU datasheet: H100 PCIe 51 TFLOPS FP32,
		// 80 GB HBM2e.
		{Name: "h100-pcie", MemMiB: mib(80), TFLOPS: 51},
		// NVIDIA H200 Tensor Core GPU datasheet: H200 SXM 67 TFLOPS FP32,
		// 141 GB HBM3e.
		{Name: "h200", MemMiB: mib(141), TFLOPS: 67},
	}
}

// LookupType returns the catalog entry for name, compared without regard to
// case ("V100" finds "v100"), and whether there is one.
func LookupType(name string) (model.GPUType, bool) {
	name = strings.ToLower(name)
	for _, t := range Catalog() {
		if t.Name == name {
			return t, true
		}
	}
	return model.GPUType{}, false
}

// typeNames returns the names of types, sorted, joined with ", " for use in
// error messages.
func typeNames(types []model.GPUType) string {
	names := make([]string, len(types))
	for i, t := range types {
		names[i] = t.Name
	}
	slices.Sort(names)
	return strings.Join(names, ", ")
}
