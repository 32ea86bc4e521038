package config

import (
	"math"
	"slices"
	"time"
)

// EnergySpec is the energy block of a scheduler configuration file: the
// settings of seed 002 on live machines that only `gpusched server` and
// `gpusched dev` read (docs/CONFIG.md, docs/ENERGY.md "Live").
type EnergySpec struct {
	// SuspendIdle reports idle nodes as power-down candidates
	// (--suspend-idle).
	SuspendIdle *bool `json:"suspend_idle,omitempty"`
	// SuspendAfter is how long a node must stay idle (--suspend-after).
	SuspendAfter string `json:"suspend_after,omitempty"`
	// SuspendHook is the command (argv) run for each candidate.
	SuspendHook []string `json:"suspend_hook,omitempty"`
	// CalibrateWindow and CalibrateTolerance are the learned calibration's
	// options (calibrate --window, --tolerance).
	CalibrateWindow    *float64 `json:"calibrate_window,omitempty"`
	CalibrateTolerance *float64 `json:"calibrate_tolerance,omitempty"`
	// MinNewSamples is how many new samples start a recalibration.
	MinNewSamples *int `json:"min_new_samples,omitempty"`
	// RTTWindow is how many of the latest probes give a distance's median.
	RTTWindow *int `json:"rtt_window,omitempty"`
}

// EnergySettings are the energy block's values; a zero field (nil
// pointer, empty hook) was not in the file.
type EnergySettings struct {
	SuspendIdle                         *bool
	SuspendAfter                        *time.Duration
	SuspendHook                         []string
	CalibrateWindow, CalibrateTolerance *float64
	MinNewSamples, RTTWindow            *int
}

// Energy returns the energy block's values (checked by ParseSchedFile).
func (f *SchedFile) Energy() EnergySettings {
	if f.EnergyBlock == nil {
		return EnergySettings{}
	}
	e := f.EnergyBlock
	out := EnergySettings{SuspendIdle: e.SuspendIdle, SuspendHook: slices.Clone(e.SuspendHook),
		CalibrateWindow: e.CalibrateWindow, CalibrateTolerance: e.CalibrateTolerance, MinNewSamples: e.MinNewSamples,
		RTTWindow: e.RTTWindow}
	if d, err := time.ParseDuration(e.SuspendAfter); err == nil && e.SuspendAfter != "" {
		out.SuspendAfter = &d
	}
	return out
}

// checkEnergy validates the energy block.
func (f *SchedFile) checkEnergy(name string) error {
	e := f.EnergyBlock
	if e == nil {
		return nil
	}
	if e.SuspendAfter != "" {
		if d, err := time.ParseDuration(e.SuspendAfter); err != nil || d <= 0 {
			return fieldError(name, "energy.suspend_after", "must be a positive duration such as 10m, got %q", e.SuspendAfter)
		}
	}
	if len(e.SuspendHook) > 0 && e.SuspendHook[0] == "" {
		return fieldError(name, "energy.suspend_hook", "the program (first element) is empty")
	}
	if w := e.CalibrateWindow; w != nil && !(*w > 0 && *w <= 1) {
		return fieldError(name, "energy.calibrate_window", "must be in (0, 1], got %v", *w)
	}
	if t := e.CalibrateTolerance; t != nil && (!(*t > 0) || math.IsInf(*t, 0)) {
		return fieldError(name, "energy.calibrate_tolerance", "must be a positive number, got %v", *t)
	}
	for _, c := range []struct {
		field string
		v     *int
	}{{"energy.min_new_samples", e.MinNewSamples}, {"energy.rtt_window", e.RTTWindow}} {
		if c.v != nil && (*c.v < 1 || *c.v > 100000) {
			return fieldError(name, c.field, "must be 1..100000, got %d", *c.v)
		}
	}
	return nil
}
