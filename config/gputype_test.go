package config

import (
	"strings"
	"testing"
)

// TestTypeFromProductLabel: the product strings of NVIDIA's GPU Feature
// Discovery (node label nvidia.com/gpu.product: the NVML name with '-'
// for spaces) map like the NVML names (TestTypeFromName).
func TestTypeFromProductLabel(t *testing.T) {
	tests := map[string]string{
		"Tesla-K80":                    "k80",
		"Tesla-P100-PCIE-16GB":         "p100-pcie",
		"Tesla-V100-SXM2-16GB":         "v100",
		"Tesla-V100-SXM2-32GB":         "v100m32",
		"Tesla-V100-PCIE-16GB":         "v100-pcie",
		"Tesla-T4":                     "t4",
		"NVIDIA-A10G":                  "a10g",
		"NVIDIA-A100-SXM4-40GB":        "a100",
		"NVIDIA-A100-SXM4-80GB":        "a100-80",
		"NVIDIA-A100-80GB-PCIe":        "a100-80",
		"NVIDIA-H100-80GB-HBM3":        "h100",
		"NVIDIA-H100-PCIe":             "h100-pcie",
		"NVIDIA-H200":                  "h200",
		"NVIDIA-L4":                    "l4",
		"NVIDIA-GeForce-RTX-4090":      "rtx-4090",
		"NVIDIA-H100-80GB-HBM3-SHARED": "h100",
		"":                             "unknown",
	}
	for product, want := range tests {
		if got := TypeFromName(product); got != want {
			t.Errorf("TypeFromName(%q) = %q, want %q", product, got, want)
		}
	}
}

// TestTypeFromName: the names NVML and nvidia-smi report (what the agent
// discovers) map to the catalog's types.
func TestTypeFromName(t *testing.T) {
	tests := map[string]string{
		"NVIDIA H200":                "h200",
		"NVIDIA H200 NVL":            "h200-nvl",
		"NVIDIA H100 80GB HBM3":      "h100",
		"NVIDIA H100 PCIe":           "h100-pcie",
		"NVIDIA H100 NVL":            "h100-nvl",
		"NVIDIA A100-SXM4-80GB":      "a100-80",
		"NVIDIA A100 80GB PCIe":      "a100-80",
		"NVIDIA A100-SXM4-40GB":      "a100",
		"NVIDIA A100-PCIE-40GB":      "a100",
		"Tesla V100-SXM2-16GB":       "v100",
		"Tesla V100-SXM2-32GB":       "v100m32",
		"Tesla V100-PCIE-16GB":       "v100-pcie",
		"Tesla V100S-PCIE-32GB":      "v100m32",
		"Tesla P100-PCIE-16GB":       "p100-pcie",
		"Tesla P100-SXM2-16GB":       "p100",
		"Tesla K80":                  "k80",
		"Tesla T4":                   "t4",
		"NVIDIA A10":                 "a10",
		"NVIDIA A10G":                "a10g",
		"NVIDIA A30":                 "a30",
		"NVIDIA L4":                  "l4",
		"NVIDIA L40S":                "l40s",
		"NVIDIA GeForce RTX 4090":    "rtx-4090",
		"NVIDIA RTX A6000":           "rtx-a6000",
		"  Quadro  RTX_8000 (rev 2)": "quadro-rtx-8000-rev-2",
		"NVIDIA":                     "unknown",
		"":                           "unknown",
	}
	for name, want := range tests {
		if got := TypeFromName(name); got != want {
			t.Errorf("TypeFromName(%q) = %q, want %q", name, got, want)
		}
	}
}

func FuzzTypeFromName(f *testing.F) {
	for _, s := range []string{"NVIDIA H200", "Tesla-V100-SXM2-16GB", "", "---", "NVIDIA-A100-80GB-PCIe"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, name string) {
		got := TypeFromName(name)
		if got == "" || strings.Trim(got, "abcdefghijklmnopqrstuvwxyz0123456789-") != "" ||
			strings.HasPrefix(got, "-") || strings.HasSuffix(got, "-") || strings.Contains(got, "--") {
			t.Fatalf("TypeFromName(%q) = %q: not a sanitized type name", name, got)
		}
	})
}
