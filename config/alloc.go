package config

import (
	"time"

	"github.com/gpusched/gpusched/core/model"
	"github.com/gpusched/gpusched/core/recipe"
)

// AllocationSpec is the allocation block: the settings of the
// allocation-matrix policies (maxmin, maxthroughput, ftf, ftf-oracle; fifo
// with gavel). Durations are Go durations ("6m", "32m").
type AllocationSpec struct {
	// Round is the round length in which the policies realise their
	// allocation (default: the simulator's round, else 6m).
	Round string `json:"round,omitempty"`
	// ReallocInterval is the least time between two computations of the
	// allocation (Gavel: 32m; default 0: whenever the active jobs change).
	ReallocInterval string `json:"realloc_interval,omitempty"`
	// Gavel follows Gavel's mechanism and formulation (docs/FIDELITY.md).
	Gavel *bool `json:"gavel,omitempty"`
	// GangProbe is esrpt's and gittins's gang probe, a quantile of the
	// learned job sizes in [0, 1) (--gang-probe; policy.Alloc.GangProbe).
	GangProbe *float64 `json:"gang_probe,omitempty"`
	// GangProbeLight is the gang probe's quantile while every job fits,
	// in [0, 1) (--gang-probe-light; policy.Alloc.GangProbeLight).
	GangProbeLight *float64 `json:"gang_probe_light,omitempty"`
	// GangProbeEven is gittins's gang probe's quantile while every job
	// fits once the finished gangs are no longer than the single-GPU jobs,
	// in [0, 1); 0: gang_probe_light's (--gang-probe-even;
	// policy.Alloc.GangProbeEven).
	GangProbeEven *float64 `json:"gang_probe_even,omitempty"`
	// AdvantageEven is the exponent of gittins's advantage weight while
	// every job fits and the finished gangs are no longer than the
	// single-GPU jobs, from 0 (off) to 4 (--advantage-even;
	// policy.Alloc.AdvantageEven).
	AdvantageEven *float64 `json:"advantage_even,omitempty"`
	// PriorityBacklog is esrpt's and gittins's priority backlog, 0 (none)
	// or a multiple of the cluster's GPUs above 1 (--priority-backlog;
	// policy.Alloc.PriorityBacklog).
	PriorityBacklog *float64 `json:"priority_backlog,omitempty"`
	// SpeedExponent is the exponent of the relative speed in esrpt's and
	// gittins's values, from 0 (meaning 1) to 4 (--speed-exponent;
	// policy.Alloc.SpeedExponent).
	SpeedExponent *float64 `json:"speed_exponent,omitempty"`
	// GangShare is gittins's gang share, from 0 (none) to 1 (--gang-share;
	// policy.Alloc.GangShare).
	GangShare *float64 `json:"gang_share,omitempty"`
	// GangOwed is gittins's owed-gang threshold, a Go duration ≥ 0 (0:
	// none, the default; --gang-owed; policy.Alloc.GangOwed).
	GangOwed string `json:"gang_owed,omitempty"`
}

// SimulatorSpec is the simulator block: modelling settings that only
// `gpusched sim` reads.
type SimulatorSpec struct {
	// Round adds a scheduling round every Round (--round).
	Round string `json:"round,omitempty"`
	// RoundsOnly schedules only at rounds, as Gavel does (--rounds-only).
	RoundsOnly *bool `json:"rounds_only,omitempty"`
	// RestartOverhead is the pause of every restart and resize
	// (--restart-overhead).
	RestartOverhead string `json:"restart_overhead,omitempty"`
	// Sleep lets idle power-managed nodes sleep (--sleep).
	Sleep *bool `json:"sleep,omitempty"`
	// MoveCost charges gittins's program the restart overhead for a
	// running job's move to another GPU type (--move-cost).
	MoveCost *bool `json:"move_cost,omitempty"`
}

// SimSettings are the simulator block's values; a zero field (nil
// pointer) was not in the file.
type SimSettings struct {
	Round, RestartOverhead      *time.Duration
	RoundsOnly, Sleep, MoveCost *bool
}

// checkAllocation validates the allocation and simulator blocks: their
// duration keys, and the allocation's gang probe, priority backlog, speed
// exponent and gang share.
func (f *SchedFile) checkAllocation(name string) error {
	a, s := f.allocation(), f.simulator()
	if p := a.GangProbe; p != nil && !recipe.ValidQuantile(*p) {
		return fieldError(name, "allocation.gang_probe", "must be a quantile from 0 (none) to below 1, got %v", *p)
	}
	if p := a.GangProbeLight; p != nil && !recipe.ValidQuantile(*p) {
		return fieldError(name, "allocation.gang_probe_light", "must be a quantile from 0 (the gang probe's) to below 1, got %v", *p)
	}
	if p := a.GangProbeEven; p != nil && !recipe.ValidQuantile(*p) {
		return fieldError(name, "allocation.gang_probe_even", "must be a quantile from 0 (gang_probe_light's) to below 1, got %v", *p)
	}
	if e := a.AdvantageEven; e != nil && !recipe.ValidSpeedExponent(*e) {
		return fieldError(name, "allocation.advantage_even", "must be from 0 (off) to 4, got %v", *e)
	}
	if b := a.PriorityBacklog; b != nil && !recipe.ValidBacklog(*b) {
		return fieldError(name, "allocation.priority_backlog", "must be 0 (none) or a finite multiple of the cluster's GPUs above 1, got %v", *b)
	}
	if e := a.SpeedExponent; e != nil && !recipe.ValidSpeedExponent(*e) {
		return fieldError(name, "allocation.speed_exponent", "must be between 0 (meaning 1) and 4, got %v", *e)
	}
	if g := a.GangShare; g != nil && !recipe.ValidGangShare(*g) {
		return fieldError(name, "allocation.gang_share", "must be a share from 0 (none) to 1, got %v", *g)
	}
	for _, d := range []struct {
		field, v string
		positive bool
	}{
		{"allocation.round", a.Round, true}, {"allocation.realloc_interval", a.ReallocInterval, false},
		{"allocation.gang_owed", a.GangOwed, false},
		{"simulator.round", s.Round, false}, {"simulator.restart_overhead", s.RestartOverhead, false},
	} {
		if d.v == "" {
			continue
		}
		v, err := time.ParseDuration(d.v)
		if err != nil || v < 0 || (d.positive && v == 0) {
			want := "a duration ≥ 0 such as 30s or 6m"
			if d.positive {
				want = "a positive duration such as 6m"
			}
			return fieldError(name, d.field, "must be %s, got %q", want, d.v)
		}
	}
	return nil
}

func (f *SchedFile) allocation() AllocationSpec {
	if f.Allocation == nil {
		return AllocationSpec{}
	}
	return *f.Allocation
}

func (f *SchedFile) simulator() SimulatorSpec {
	if f.Simulator == nil {
		return SimulatorSpec{}
	}
	return *f.Simulator
}

// applyAllocation copies the allocation block into o, except the settings
// whose flag is given (--realloc-interval, --gavel, --gang-probe,
// --gang-probe-light, --gang-probe-even, --advantage-even, --priority-backlog, --speed-exponent,
// --gang-share).
func (f *SchedFile) applyAllocation(o *recipe.Options, given func(flag string) bool) {
	a := f.allocation()
	if a.Round != "" {
		o.Alloc.Round = millis(a.Round)
	}
	if a.ReallocInterval != "" && !given("realloc-interval") {
		o.Alloc.Realloc = millis(a.ReallocInterval)
	}
	if a.Gavel != nil && !given("gavel") {
		o.Alloc.Gavel = *a.Gavel
	}
	if a.GangProbe != nil && !given("gang-probe") {
		o.Alloc.GangProbe = *a.GangProbe
	}
	if a.GangProbeLight != nil && !given("gang-probe-light") {
		o.Alloc.GangProbeLight = *a.GangProbeLight
	}
	if a.GangProbeEven != nil && !given("gang-probe-even") {
		o.Alloc.GangProbeEven = *a.GangProbeEven
	}
	if a.AdvantageEven != nil && !given("advantage-even") {
		o.Alloc.AdvantageEven = *a.AdvantageEven
	}
	if a.PriorityBacklog != nil && !given("priority-backlog") {
		o.Alloc.PriorityBacklog = *a.PriorityBacklog
	}
	if a.SpeedExponent != nil && !given("speed-exponent") {
		o.Alloc.SpeedExponent = *a.SpeedExponent
	}
	if a.GangShare != nil && !given("gang-share") {
		o.Alloc.GangShare = *a.GangShare
	}
	if a.GangOwed != "" && !given("gang-owed") {
		o.Alloc.GangOwed = millis(a.GangOwed)
	}
}

// AllocationRound reports whether the file sets allocation.round.
func (f *SchedFile) AllocationRound() bool { return f.allocation().Round != "" }

// Sim returns the simulator block's settings.
func (f *SchedFile) Sim() SimSettings {
	s := f.simulator()
	var out SimSettings
	if s.Round != "" {
		d, _ := time.ParseDuration(s.Round) // checked by ParseSchedFile
		out.Round = &d
	}
	if s.RestartOverhead != "" {
		d, _ := time.ParseDuration(s.RestartOverhead)
		out.RestartOverhead = &d
	}
	out.RoundsOnly, out.Sleep, out.MoveCost = s.RoundsOnly, s.Sleep, s.MoveCost
	return out
}

// millis converts a checked Go duration to model time.
func millis(s string) model.Time {
	d, _ := time.ParseDuration(s)
	return model.Time(d.Milliseconds())
}
