package power

import "strings"

// Defaults of the node and workload models; docs/ENERGY.md gives the
// reasoning and the sources.
const (
	// DefaultBaseW is a node's draw without its GPUs, in watts: an estimate
	// for the host of a GPU server (two CPU sockets, memory, fans, NICs,
	// power-supply losses) at idle.
	DefaultBaseW = 200.0
	// DefaultKnee is the load above which jobs on a node slow down: with 4
	// or 8 GPUs per node, only nodes with more than three quarters of their
	// GPUs busy are affected.
	DefaultKnee = 0.75
	// DefaultSlowdown is the fraction of speed jobs lose on a full node.
	DefaultSlowdown = 0.3
	// DefaultUtil is the utilisation of a busy GPU: training keeps a GPU at
	// its board power.
	DefaultUtil = 1.0
	// DefaultSensitivity is how strongly a family feels contention: as the
	// node says.
	DefaultSensitivity = 1.0
	// DefaultSleepW is the draw of a suspended (powered-down) node in
	// watts: its BMC, a NIC that listens for the wake-up and the power
	// supplies' standby losses; an estimate, about 5 % of the idle draw of
	// a node that is on (docs/ENERGY.md).
	DefaultSleepW = 20.0
	// DefaultSleepAfterS is how long an idle power-managed node stays on
	// before it suspends itself, in seconds (Slurm's SuspendTime): at least
	// the wake-up time plus the time to shut down, as Slurm's power-saving
	// guide recommends.
	DefaultSleepAfterS = 600.0
	// DefaultWakeS is how long a suspended node takes to be up again, in
	// seconds: a server's boot from power-off (docs/ENERGY.md).
	DefaultWakeS = 300.0
)

// Calibration settings for ramps of this model (seed 002, claim 5). The
// shell passes them to calibrate.Fit: calibrate.Options{Tolerance:
// FitTolerance} on Ramp(..., RampSteps).
const (
	// FitTolerance is the relative slope below which a ramp's energy per
	// unit of work counts as flat: a change of less than 10 % of its
	// minimum per 0.1 of load. calibrate's default, 1 % per 0.1 of load,
	// suits a curve whose static power is negligible in the middle of the
	// ramp; a GPU node's base and idle power keep the curve falling gently
	// until the contention knee, so that under that default no ramp of
	// this model's defaults has a flat region at all (calibrate reports
	// ErrNoStableRegion).
	FitTolerance = 1.0
	// RampSteps is the number of load steps of a calibration ramp.
	RampSteps = 100
)

// TypePower is the default power description of one GPU type of the
// catalog, with where its figures come from.
type TypePower struct {
	// Name is the catalog's type name (lower case).
	Name string
	GPUPower
	// Source names the sources of MaxW and IdleW (docs/ENERGY.md has the
	// links).
	Source string
}

// Defaults returns the default power of every GPU type of the catalog
// (config.Catalog), as a fresh slice. MaxW is the board power (TDP) from
// NVIDIA's datasheet, per GPU; IdleW is a public measurement where one is
// cited and otherwise an estimate, 15 % of MaxW (between the measured ratios
// of the K80, 17 %, and the H200, 11 %).
func Defaults() []TypePower {
	const (
		est  = "; idle: estimate, 15 % of TDP"
		h200 = "; idle: public nvidia-smi readings of idle H200s (74–80 W)"
	)
	t := func(name string, idleW, maxW float64, src string) TypePower {
		return TypePower{Name: name, GPUPower: GPUPower{IdleW: idleW, MaxW: maxW}, Source: src}
	}
	return []TypePower{
		t("k80", 25, 150, "K80 datasheet: 300 W per board of two GPUs; idle: about 25 W per GPU in P8 (NVIDIA developer forums)"),
		t("p100", 45, 300, "P100 datasheet (SXM2)"+est),
		t("p100-pcie", 37.5, 250, "P100 datasheet (PCIe)"+est),
		t("v100", 45, 300, "V100 datasheet (SXM2)"+est),
		t("v100-pcie", 37.5, 250, "V100 datasheet (PCIe)"+est),
		t("v100m16", 45, 300, "V100 datasheet (SXM2, as the catalog)"+est),
		t("v100m32", 45, 300, "V100 datasheet (SXM2, as the catalog)"+est),
		t("t4", 10.5, 70, "T4 datasheet"+est),
		t("a10", 22.5, 150, "A10 datasheet"+est),
		t("a30", 24.75, 165, "A30 datasheet"+est),
		t("a100", 60, 400, "A100 datasheet (40GB SXM)"+est),
		t("a100-80", 60, 400, "A100 datasheet (80GB SXM; PCIe 300 W)"+est),
		t("l4", 10.8, 72, "L4 datasheet"+est),
		t("h100", 75, 700, "H100 datasheet (SXM, up to 700 W); idle: estimate, as the H200 (same GH100 GPU)"),
		t("h100-pcie", 52.5, 350, "H100 datasheet (PCIe, 300–350 W)"+est),
		t("h200", 75, 700, "H200 datasheet (SXM, up to 700 W)"+h200),
	}
}

// Lookup returns the default power of the named GPU type, compared without
// regard to case, and whether there is one.
func Lookup(name string) (GPUPower, bool) {
	name = strings.ToLower(name)
	for _, t := range Defaults() {
		if t.Name == name {
			return t.GPUPower, true
		}
	}
	return GPUPower{}, false
}

// DefaultNode returns the default node description: DefaultBaseW, the
// default contention, and power-managed: suspended at DefaultSleepW after
// DefaultSleepAfterS idle, up again DefaultWakeS after a job is placed on
// it.
func DefaultNode() NodePower {
	return NodePower{BaseW: DefaultBaseW, Contention: Contention{Knee: DefaultKnee, Slowdown: DefaultSlowdown},
		Sleeps: true, SleepW: DefaultSleepW, SleepAfterS: DefaultSleepAfterS, WakeS: DefaultWakeS}
}

// DefaultWorkload returns the workload of a job whose algorithm type has no
// description of its own.
func DefaultWorkload() Workload {
	return Workload{Util: DefaultUtil, Sensitivity: DefaultSensitivity}
}
