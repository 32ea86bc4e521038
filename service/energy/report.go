package energy

import (
	"maps"
	"slices"
	"time"

	"github.com/gpusched/gpusched/service/api"
	"github.com/gpusched/gpusched/service/replay"
)

// The energy report (docs/ENERGY.md, "What energy placement saved"): the
// nodes' accounts (account.go), the jobs' energy and, for comparison, the
// modelled energy of the same jobs replayed under the pack placer on the
// same cluster (package replay).

// replayDir is the directory the report's command names.
const replayDir = "replay"

// Report returns the energy report's accounts: the nodes' and, from jobs
// (the jobs with energy, oldest first), the jobs' and their sums by user
// and by queue. policy and placer name the shell's stages.
func (l *Live) Report(w World, policy, placer string, jobs []api.JobEnergyUse) api.EnergyReport {
	now := l.now().UTC()
	rep := api.EnergyReport{At: now, Since: now, Policy: policy, Placer: placer, States: []api.StateEnergy{},
		Nodes: []api.NodeEnergyUse{}, Jobs: []api.JobEnergyUse{}, Users: []api.GroupEnergyUse{},
		Queues: []api.GroupEnergyUse{}}
	states := map[string]float64{}
	for _, name := range slices.Sorted(maps.Keys(l.energy)) {
		ne := l.energy[name]
		if ne.Since.Before(rep.Since) {
			rep.Since = ne.Since
		}
		kwh, mod := (ne.MeasuredJ+ne.ModelledJ)/JoulesPerKWh, ne.ModelledJ/JoulesPerKWh
		u := api.NodeEnergyUse{Name: name, KWh: kwh, ModelledKWh: mod, Measured: kwh > 0 && mod == 0}
		if c := l.classOf(node(w, name)); c != nil {
			u.Class = c.name
		}
		rep.Nodes = append(rep.Nodes, u)
		rep.TotalKWh += kwh
		rep.ModelledKWh += mod
		for st, j := range ne.StatesJ {
			states[st] += j / JoulesPerKWh
		}
	}
	rep.MeasuredKWh = rep.TotalKWh - rep.ModelledKWh
	for _, st := range energyStates {
		rep.States = append(rep.States, api.StateEnergy{State: st, KWh: states[st]})
	}
	jobEnergy(&rep, jobs)
	rep.IdleKWh = max(rep.TotalKWh-rep.JobsKWh, 0)
	return rep
}

// jobEnergy adds jobs to rep, and their sums by user and by queue.
func jobEnergy(rep *api.EnergyReport, jobs []api.JobEnergyUse) {
	users, queues := energyGroups{}, energyGroups{}
	for _, u := range jobs {
		rep.Jobs = append(rep.Jobs, u)
		rep.JobsKWh += u.KWh
		users.add(u.User, u.KWh, u.ModelledKWh)
		queues.add(u.Queue, u.KWh, u.ModelledKWh)
	}
	rep.Users = append(rep.Users, users.sorted()...)
	rep.Queues = append(rep.Queues, queues.sorted()...)
}

// AddReplay sets the pack replay of the report (model is the modelled
// energy of the run, ModelledRun): the modelled energy of the same jobs
// replayed under the pack placer and policy on the same nodes. Call it
// outside the shell's lock: it runs the simulator.
func AddReplay(rep *api.EnergyReport, nodes []replay.Node, jobs []replay.Job, policy string, model float64) {
	cluster, trace, err := replay.Files(nodes, jobs)
	if err == nil {
		var res replay.Result
		if res, err = replay.Energy(cluster, trace, policy); err == nil {
			rep.PackKWh = ptr(res.TotalKWh)
			from, to := replayWindow(jobs, rep.At)
			rep.Replay = &api.ReplaySummary{Jobs: len(jobs), From: from, To: to, PackJobsKWh: res.JobsKWh,
				PackIdleKWh: res.IdleKWh, ModelKWh: model, SavedKWh: res.TotalKWh - model,
				Command: replay.Command(replayDir, policy)}
		}
	}
	if err != nil {
		rep.PackError = err.Error()
	}
}

// ReplayPower sets the power figures of a replay's node n: its class's
// (with the suspend settings when idle nodes are powered down).
func (l *Live) ReplayPower(w World, n *replay.Node) {
	c := l.classOf(node(w, n.Name))
	if c == nil {
		return
	}
	p := c.node
	if l.cfg.SuspendIdle {
		p.Sleeps, p.SleepAfterS = true, l.cfg.SuspendAfter.Seconds()
	}
	n.Power, n.GPU = p, c.gpu
}

// energyGroups sums jobs' energy by a name (a user, a queue).
type energyGroups map[string]*api.GroupEnergyUse

// add counts a job of group name with kwh, mod of it modelled.
func (g energyGroups) add(name string, kwh, mod float64) {
	u := g[name]
	if u == nil {
		u = &api.GroupEnergyUse{Name: name, Measured: true}
		g[name] = u
	}
	u.Jobs++
	u.KWh += kwh
	u.ModelledKWh += mod
	u.Measured = u.Measured && mod == 0
}

// sorted returns the groups by name.
func (g energyGroups) sorted() []api.GroupEnergyUse {
	out := make([]api.GroupEnergyUse, 0, len(g))
	for _, name := range slices.Sorted(maps.Keys(g)) {
		out = append(out, *g[name])
	}
	return out
}

// replayWindow returns the span of the replayed jobs: the first
// submission, and now (the report's time).
func replayWindow(jobs []replay.Job, now time.Time) (from, to time.Time) {
	for i, j := range jobs {
		if i == 0 || j.Submit.Before(from) {
			from = j.Submit
		}
	}
	return from.UTC(), now
}
