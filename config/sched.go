package config

import (
	"math"
	"slices"

	"github.com/gpusched/gpusched/core/model"
	"github.com/gpusched/gpusched/core/recipe"
)

// SchedFile is a scheduler configuration file (--config, docs/CONFIG.md):
// the stage names and their settings, shared by every shell. Every field is
// optional; a flag given on the command line wins over the file.
type SchedFile struct {
	Policy string `json:"policy,omitempty"`
	Placer string `json:"placer,omitempty"`
	Scaler string `json:"scaler,omitempty"`
	// Backfill is fifo's backfill switch.
	Backfill *bool `json:"backfill,omitempty"`
	// HLAS holds hlas's and las's thresholds (seed 003).
	HLAS *HLASSpec `json:"hlas,omitempty"`
	// Tiresias holds tiresias's queue limits and promotion knob.
	Tiresias *TiresiasSpec `json:"tiresias,omitempty"`
	// ElasticConfig is seed 000's block, with the seed's own key names.
	ElasticConfig *ElasticSpec `json:"elasticConfig,omitempty"`
	// Fulfillment holds seed 001's desired maximum load.
	Fulfillment *FulfillmentSpec `json:"fulfillment,omitempty"`
	// Allocation holds the allocation policies' settings.
	Allocation *AllocationSpec `json:"allocation,omitempty"`
	// Simulator holds settings that only `gpusched sim` reads.
	Simulator *SimulatorSpec `json:"simulator,omitempty"`
	// QueuesSpec holds the teams' queues (queues, fair_share,
	// default_queue; docs/QUEUES.md).
	QueuesSpec
	// EnergyBlock holds seed 002's live settings, read by server and dev.
	EnergyBlock *EnergySpec `json:"energy,omitempty"`
}

// HLASSpec is the hlas block.
type HLASSpec struct {
	PriorityThresholdRatio *float64 `json:"priority_threshold_ratio,omitempty"`
	StarveThresholdRatio   *float64 `json:"starve_threshold_ratio,omitempty"`
}

// TiresiasSpec is the tiresias block.
type TiresiasSpec struct {
	// ThresholdsGPUSeconds are the queue limits in GPU-seconds, ascending.
	ThresholdsGPUSeconds []float64 `json:"thresholds_gpu_s,omitempty"`
	PromoteKnob          *float64  `json:"promote_knob,omitempty"`
}

// ElasticSpec is seed 000's elasticConfig block.
type ElasticSpec struct {
	ElasticProportion *float64 `json:"elasticProportion,omitempty"`
	ExpandThreshold   *float64 `json:"expandThreshold,omitempty"`
	// ExpandPolicy and ScalingPolicy name the loops' behaviour; the seed
	// defines only "fail" and "priority", the only values accepted.
	ExpandPolicy     string   `json:"expandPolicy,omitempty"`
	ScalingThreshold *float64 `json:"scalingThreshold,omitempty"`
	ScalingPolicy    string   `json:"scalingPolicy,omitempty"`
	HPACheckMinutes  *float64 `json:"hpaCheckMinutes,omitempty"`
	// CountWaiting counts waiting jobs' minimums in the work in use
	// (scaler.ThresholdConfig.CountWaiting).
	CountWaiting *bool `json:"countWaiting,omitempty"`
	// Reclaim takes lent GPUs back at once, under both scalers
	// (scaler.ThresholdConfig.Reclaim); false: the seeds as written.
	Reclaim *bool `json:"reclaim,omitempty"`
}

// FulfillmentSpec is the fulfillment block.
type FulfillmentSpec struct {
	MaxLoad *float64 `json:"max_load,omitempty"`
}

// ParseSchedFile decodes a scheduler configuration file. name is used only
// in error messages, e.g. "NAME: elasticConfig.expandThreshold: ...".
func ParseSchedFile(name string, data []byte) (*SchedFile, error) {
	f, err := decodeStrict[SchedFile](name, data)
	if err != nil {
		return nil, err
	}
	if err := f.check(name); err != nil {
		return nil, err
	}
	return f, nil
}

// check validates the values whose meaning does not depend on other
// settings; recipe.New checks the rest when it builds the engine.
func (f *SchedFile) check(name string) error {
	h, e, ff := f.hlas(), f.elastic(), f.fulfillment()
	for _, c := range []struct {
		field     string
		v         *float64
		allowZero bool
	}{
		{"hlas.priority_threshold_ratio", h.PriorityThresholdRatio, false},
		{"hlas.starve_threshold_ratio", h.StarveThresholdRatio, false},
		{"elasticConfig.elasticProportion", e.ElasticProportion, false},
		{"elasticConfig.expandThreshold", e.ExpandThreshold, true},
		{"elasticConfig.scalingThreshold", e.ScalingThreshold, false},
		{"elasticConfig.hpaCheckMinutes", e.HPACheckMinutes, false},
		{"fulfillment.max_load", ff.MaxLoad, false},
	} {
		if c.v == nil || (*c.v > 0 && !math.IsInf(*c.v, 0)) || (c.allowZero && *c.v == 0) {
			continue
		}
		want := "a positive number"
		if c.allowZero {
			want = "a finite number ≥ 0"
		}
		return fieldError(name, c.field, "must be %s, got %v", want, *c.v)
	}
	if p := e.ExpandPolicy; p != "" && p != "fail" {
		return fieldError(name, "elasticConfig.expandPolicy", "only %q is defined (seed 000), got %q", "fail", p)
	}
	if p := e.ScalingPolicy; p != "" && p != "priority" {
		return fieldError(name, "elasticConfig.scalingPolicy", "only %q is defined (seed 000), got %q", "priority", p)
	}
	if _, err := f.Quota(name); err != nil {
		return err
	}
	if err := f.checkEnergy(name); err != nil {
		return err
	}
	return f.checkAllocation(name)
}

func (f *SchedFile) hlas() HLASSpec {
	if f.HLAS == nil {
		return HLASSpec{}
	}
	return *f.HLAS
}

func (f *SchedFile) elastic() ElasticSpec {
	if f.ElasticConfig == nil {
		return ElasticSpec{}
	}
	return *f.ElasticConfig
}

func (f *SchedFile) fulfillment() FulfillmentSpec {
	if f.Fulfillment == nil {
		return FulfillmentSpec{}
	}
	return *f.Fulfillment
}

// Apply copies the file's settings into n and o, except those whose
// command-line flag (named as in `gpusched sim`) is given: given(flag)
// reports that.
func (f *SchedFile) Apply(n *recipe.Names, o *recipe.Options, given func(flag string) bool) {
	str := func(flag, v string, dst *string) {
		if v != "" && !given(flag) {
			*dst = v
		}
	}
	num := func(flag string, v *float64, dst *float64) {
		if v != nil && !given(flag) {
			*dst = *v
		}
	}
	str("policy", f.Policy, &n.Policy)
	str("placer", f.Placer, &n.Placer)
	str("scaler", f.Scaler, &n.Scaler)
	if f.Backfill != nil && !given("backfill") {
		o.Backfill = *f.Backfill
	}
	num("priority-ratio", f.hlas().PriorityThresholdRatio, &o.PriorityRatio)
	num("starve-ratio", f.hlas().StarveThresholdRatio, &o.StarveRatio)
	if t := f.Tiresias; t != nil {
		if len(t.ThresholdsGPUSeconds) > 0 && !given("tiresias-thresholds") {
			o.TiresiasThresholds = slices.Clone(t.ThresholdsGPUSeconds)
		}
		num("tiresias-promote-knob", t.PromoteKnob, &o.TiresiasPromoteKnob)
	}
	e := f.elastic()
	num("elastic-proportion", e.ElasticProportion, &o.Threshold.Proportion)
	num("expand-threshold", e.ExpandThreshold, &o.Threshold.Expand)
	num("scaling-threshold", e.ScalingThreshold, &o.Threshold.Shrink)
	if e.HPACheckMinutes != nil && !given("scaler-period") {
		o.Threshold.Period = model.Time(math.Round(*e.HPACheckMinutes * float64(model.Minute)))
	}
	if e.CountWaiting != nil {
		o.Threshold.CountWaiting = *e.CountWaiting
	}
	if e.Reclaim != nil && !given("reclaim") {
		o.Threshold.Reclaim = *e.Reclaim
	}
	num("max-load", f.fulfillment().MaxLoad, &o.MaxLoad)
	f.applyAllocation(o, given)
	if f.QueuesSpec.Declared() && !given("queues") {
		q, _ := f.Quota("") // checked by ParseSchedFile
		if given("fair-share") && o.Queues != nil {
			q.Usage = o.Queues.Usage
		}
		o.Queues = &q
	}
}
