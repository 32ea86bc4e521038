package cli

import (
	"fmt"
	"slices"

	"github.com/gpusched/gpusched/config"
	"github.com/gpusched/gpusched/core/engine"
	"github.com/gpusched/gpusched/core/model"
	"github.com/gpusched/gpusched/core/network"
	"github.com/gpusched/gpusched/core/placer"
	"github.com/gpusched/gpusched/core/power"
	"github.com/gpusched/gpusched/core/recipe"
)

// loadNetwork returns the network model of the cluster file (seed 002), or
// nil for a cluster without storage devices.
func loadNetwork(name string, f *config.File, c *model.Cluster) (*network.Network, error) {
	if f == nil {
		return nil, nil
	}
	net, err := f.NetworkModel(name, c)
	if err != nil {
		return nil, usageError{err}
	}
	return net, nil
}

// buildEngine assembles the engine from the stage names. The energy placer
// also gets the cluster's network and its load thresholds, calibrated from
// the power model as the run applies it (runPower: a node without
// contention has no rising region), and which nodes sleep (energyTable).
func buildEngine(o *simOptions, f *config.File, in *simInputs) (*engine.Engine, error) {
	opts := o.opts
	if o.names.Placer == "energy" {
		pw, err := clusterPower(in.fileName, f, in.cluster)
		if err != nil {
			return nil, err
		}
		runPower(pw, o.sleep, in.contention)
		table, err := energyTable(in.cluster, pw, in.jobs, nil, fitShape)
		if err != nil {
			return nil, badInput("--placer energy: %w", err)
		}
		opts.Energy = recipe.EnergyInputs{Cluster: in.cluster, Table: table, Network: in.network, Upgrade: o.upgrade}
	}
	eng, err := recipe.New(o.names, opts)
	if err != nil {
		return nil, usageError{err}
	}
	return eng, nil
}

// clusterPower returns the power description of the cluster: the cluster
// file's, or the defaults for a --gpus cluster.
func clusterPower(name string, f *config.File, c *model.Cluster) (*power.Cluster, error) {
	if f != nil {
		pw, err := f.Power(name, c)
		if err != nil {
			return nil, usageError{err}
		}
		return pw, nil
	}
	pw, err := power.DefaultCluster(c)
	if err != nil {
		return nil, badInput("--gpus: %w", err)
	}
	return pw, nil
}

// shapeKey is what a calibration depends on: the node's power model, its
// GPU type's power, the algorithm type's workload and the node's GPU count.
type shapeKey struct {
	node  power.NodePower
	gpu   power.GPUPower
	w     power.Workload
	total int
}

// energyTable derives seed 002's type→thresholds table (claim 4) for every
// node of c and every algorithm type of jobs (placer.Family of their model,
// plus placer.DefaultFamily): it fits calibrate.Fit, with
// power.FitTolerance, to the power model's calibration ramp (power.Ramp,
// power.RampSteps steps) of each distinct node shape and workload, once,
// so that a thousand nodes of one shape cost one fit. workloads gives the
// workload of a family; a family without one uses power.DefaultWorkload.
// fit calibrates one shape (fitShape; tests count the calls).
func energyTable(c *model.Cluster, pw *power.Cluster, jobs []model.JobSpec, workloads map[string]power.Workload,
	fit func(shapeKey) (placer.LoadThresholds, error)) (*placer.EnergyTable, error) {
	families := []string{placer.DefaultFamily}
	t := &placer.EnergyTable{Families: map[string]int{placer.DefaultFamily: 0}, Class: make([]int, len(c.Nodes)),
		Sleeps: make([]bool, len(c.Nodes))}
	for _, j := range jobs {
		if f := placer.Family(j.Model); !slices.Contains(families, f) {
			families = append(families, f)
		}
	}
	slices.Sort(families[1:])
	for k, f := range families {
		t.Families[f] = k
	}
	classes := map[shapeKey]int{} // by shape, workload zero
	fits := map[shapeKey]placer.LoadThresholds{}
	for i, n := range c.Nodes {
		t.Sleeps[i] = pw.Nodes[i].Sleeps
		shape := shapeKey{node: pw.Nodes[i], gpu: pw.Types[n.Type], total: n.GPUs}
		k, ok := classes[shape]
		if ok {
			t.Class[i] = k
			continue
		}
		k = len(t.Th)
		classes[shape], t.Class[i] = k, k
		row := make([]placer.LoadThresholds, len(families))
		for col, f := range families {
			w, ok := workloads[f]
			if !ok {
				w = power.DefaultWorkload()
			}
			key := shape
			key.w = w
			th, ok := fits[key]
			if !ok {
				var err error
				if th, err = fit(key); err != nil {
					return nil, fmt.Errorf("node %s (%s × %d GPUs), algorithm type %q: %w", n.Name, c.Types[n.Type].Name, n.GPUs, f, err)
				}
				fits[key] = th
			}
			row[col] = th
		}
		t.Th = append(t.Th, row)
	}
	return t, nil
}

// fitShape calibrates one node shape and workload on the power model's
// ramp (config.ModelThresholds).
func fitShape(k shapeKey) (placer.LoadThresholds, error) {
	th, _, err := config.ModelThresholds(k.node, k.gpu, k.w, k.total)
	return th, err
}
