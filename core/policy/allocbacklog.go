package policy

import (
	"math"

	"github.com/gpusched/gpusched/core/model"
)

// DefaultPriorityBacklog is the priority backlog the shells set
// (recipe.DefaultOptions): EstSRPT's and Gittins's weights are fully their
// own once the active jobs ask for 8 times the cluster's GPUs, chosen by
// experiment (docs/EXPERIMENTS.md, issue 21).
const DefaultPriorityBacklog = 8

// backlogPower returns the power β to which EstSRPT and Gittins raise each
// job's value per GPU (see Alloc.PriorityBacklog) when the active jobs ask
// for demand GPUs on a cluster of capacity: (demand/capacity − 1) /
// (backlog − 1), clamped to [0, 1]; 1 (the weights unchanged) when backlog
// is at most 1 (none) or the cluster has no GPUs.
func backlogPower(demand, capacity, backlog float64) float64 {
	if backlog <= 1 || capacity <= 0 {
		return 1
	}
	return min(max((demand/capacity-1)/(backlog-1), 0), 1)
}

// flatten returns the weight of a job of gpus GPUs and weight w once its
// value per GPU, w/gpus, is raised to beta: gpus·(w/gpus)^beta. With beta
// 1 it is w; with beta 0 every job is worth the same per GPU.
func flatten(w float64, gpus int, beta float64) float64 {
	if beta >= 1 || gpus <= 0 {
		return w
	}
	g := float64(gpus)
	return g * math.Pow(w/g, beta)
}

// priorityPower returns β for the jobs a tracks now: the GPUs asked for by
// those that can run somewhere (best speed above 0) against the cluster's;
// 1 with the oracle, which keeps its weights.
func (a *Alloc) priorityPower(s *model.State, best []float64) float64 {
	if a.Oracle || a.PriorityBacklog <= 1 {
		return 1
	}
	var demand float64
	for i, st := range a.states {
		if best[i] > 0 {
			demand += float64(st.gpus)
		}
	}
	return backlogPower(demand, float64(s.Cluster.TotalGPUs()), a.PriorityBacklog)
}
