package config

import (
	"slices"
	"strings"
)

// TypeFromName maps a GPU's marketing name, as NVML and nvidia-smi report
// it or as NVIDIA's GPU Feature Discovery writes it into the node label
// nvidia.com/gpu.product ("Tesla-V100-SXM2-16GB": the same words joined by
// '-'), to gpusched's lower-case GPU type: "NVIDIA H200" → "h200",
// "Tesla V100-SXM2-16GB" → "v100", "Tesla V100-PCIE-32GB" → "v100m32",
// "NVIDIA A100-SXM4-80GB" → "a100-80", "NVIDIA H100 PCIe" → "h100-pcie".
// A name outside the catalog's families becomes its sanitized form: lower
// case, the vendor words NVIDIA, Tesla and GeForce dropped, every run of
// other characters than letters and digits replaced by one '-'
// ("NVIDIA GeForce RTX 4090" → "rtx-4090"). An empty result is "unknown".
func TypeFromName(name string) string {
	words := nameWords(name)
	if len(words) == 0 {
		return "unknown"
	}
	has := func(w string) bool { return slices.Contains(words[1:], w) }
	switch family := words[0]; family {
	case "k80", "t4", "a10", "a30", "l4":
		return family
	case "p100":
		if has("pcie") {
			return "p100-pcie"
		}
		return "p100"
	case "v100", "v100s":
		switch {
		case has("32gb"):
			return "v100m32"
		case has("pcie") || family == "v100s":
			return "v100-pcie"
		}
		return "v100"
	case "a100":
		if has("80gb") {
			return "a100-80"
		}
		return "a100"
	case "h100", "h200":
		switch {
		case has("nvl"):
			// NVL boards differ from both SXM and PCIe: keep the name.
		case family == "h100" && has("pcie"):
			return "h100-pcie"
		default:
			return family
		}
	}
	return strings.Join(words, "-")
}

// nameWords splits a GPU name into lower-case words of letters and digits,
// without the vendor words.
func nameWords(name string) []string {
	fields := strings.FieldsFunc(strings.ToLower(name), func(r rune) bool {
		return (r < 'a' || r > 'z') && (r < '0' || r > '9')
	})
	return slices.DeleteFunc(fields, func(w string) bool {
		return w == "nvidia" || w == "tesla" || w == "geforce"
	})
}
