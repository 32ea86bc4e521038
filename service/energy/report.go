package energy

import (
	"cmp"
	"slices"
	"time"

	"github.com/gpusched/gpusched/service/api"
	"github.com/gpusched/gpusched/service/replay"
)

// The energy report (docs/ENERGY.md, "What energy placement saved"): the
// nodes' accounts (energy.go), the jobs' energy and, for comparison, the
// modelled energy of the same jobs replayed under the pack placer on the
// same cluster (package replay).

// replayDir is the directory the report's command names.
const replayDir = "replay"

// Energy returns the energy report. The pack replay runs outside the
// scheduler's lock.
func (l *Live) Energy() api.EnergyReport {
	s.mu.Lock()
	rep := s.energyReport()
	nodes, jobs := s.replayInputs()
	model := s.modelledRun(l.now(), s.anyRunning())
	s.mu.Unlock()
	cluster, trace, err := replay.Files(nodes, jobs)
	if err == nil {
		var res replay.Result
		if res, err = replay.Energy(cluster, trace, s.cfg.Names.Policy); err == nil {
			rep.PackKWh = ptr(res.TotalKWh)
			from, to := replayWindow(jobs, rep.At)
			rep.Replay = &api.ReplaySummary{Jobs: ran(jobs), From: from, To: to, PackJobsKWh: res.JobsKWh,
				PackIdleKWh: res.IdleKWh, ModelKWh: model, SavedKWh: res.TotalKWh - model,
				Command: replay.Command(replayDir, s.cfg.Names.Policy)}
		}
	}
	if err != nil {
		rep.PackError = err.Error()
	}
	return rep
}

// EnergyReplay returns the pack replay's inputs as files gpusched sim
// reads; ErrConflict when there is nothing to replay.
func (l *Live) EnergyReplay() (api.EnergyReplay, error) {
	s.mu.Lock()
	nodes, jobs := s.replayInputs()
	s.mu.Unlock()
	cluster, trace, err := replay.Files(nodes, jobs)
	if err != nil {
		return api.EnergyReplay{}, conflict("nothing to replay: %v", err)
	}
	return api.EnergyReplay{Cluster: string(cluster), Trace: string(trace), Policy: s.cfg.Names.Policy}, nil
}

// energyReport builds the report's accounts. Called with s.mu held.
func (l *Live) energyReport() api.EnergyReport {
	now := l.now().UTC()
	pol, pla, _ := s.engine.Names()
	rep := api.EnergyReport{At: now, Since: now, Policy: pol, Placer: pla, States: []api.StateEnergy{},
		Nodes: []api.NodeEnergyUse{}, Jobs: []api.JobEnergyUse{}, Users: []api.GroupEnergyUse{},
		Queues: []api.GroupEnergyUse{}}
	states := map[string]float64{}
	for _, name := range slicesSortedKeys(l.energy) {
		ne := l.energy[name]
		if ne.Since.Before(rep.Since) {
			rep.Since = ne.Since
		}
		kwh, mod := (ne.MeasuredJ+ne.ModelledJ)/joulesPerKWh, ne.ModelledJ/joulesPerKWh
		u := api.NodeEnergyUse{Name: name, KWh: kwh, ModelledKWh: mod, Measured: kwh > 0 && mod == 0}
		if c := l.classOf(s.nodes[name]); c != nil {
			u.Class = c.name
		}
		rep.Nodes = append(rep.Nodes, u)
		rep.TotalKWh += kwh
		rep.ModelledKWh += mod
		for st, j := range ne.StatesJ {
			states[st] += j / joulesPerKWh
		}
	}
	rep.MeasuredKWh = rep.TotalKWh - rep.ModelledKWh
	for _, st := range energyStates {
		rep.States = append(rep.States, api.StateEnergy{State: st, KWh: states[st]})
	}
	s.jobEnergy(&rep)
	rep.IdleKWh = max(rep.TotalKWh-rep.JobsKWh, 0)
	return rep
}

// jobEnergy adds the jobs with energy to rep, oldest first, and their sums
// by user and by queue. Called with s.mu held.
func (l *Live) jobEnergy(rep *api.EnergyReport) {
	list := make([]*job, 0, len(s.jobs))
	for _, j := range s.jobs {
		if j.rec.EnergyKWh > 0 {
			list = append(list, j)
		}
	}
	slices.SortFunc(list, func(a, b *job) int { return cmp.Compare(a.seq, b.seq) })
	users, queues := energyGroups{}, energyGroups{}
	for _, j := range list {
		r := &j.rec
		mod := min(r.EnergyModelledKWh, r.EnergyKWh)
		q := r.Queue
		if q == "" {
			q = s.defaultQueue()
		}
		rep.Jobs = append(rep.Jobs, api.JobEnergyUse{ID: r.ID, Name: r.Name, User: r.User, Queue: q, State: s.viewState(j),
			KWh: r.EnergyKWh, ModelledKWh: mod, Measured: mod == 0})
		rep.JobsKWh += r.EnergyKWh
		users.add(r.User, r.EnergyKWh, mod)
		queues.add(q, r.EnergyKWh, mod)
	}
	rep.Users = append(rep.Users, users.sorted()...)
	rep.Queues = append(rep.Queues, queues.sorted()...)
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
	for _, name := range slicesSortedKeys(g) {
		out = append(out, *g[name])
	}
	return out
}

// replayInputs returns the ready nodes and the jobs that ran, for the
// replay. Called with s.mu held.
func (l *Live) replayInputs() ([]replay.Node, []replay.Job) {
	var nodes []replay.Node
	var ready []*node
	for _, name := range slicesSortedKeys(s.nodes) {
		if n := s.nodes[name]; n.ready {
			ready = append(ready, n)
		}
	}
	for _, n := range ready {
		c := l.classOf(n)
		t := s.gpuType(n.typ, ready)
		p := c.node
		if l.cfg.SuspendIdle {
			p.Sleeps, p.SleepAfterS = true, l.cfg.SuspendAfter.Seconds()
		}
		nodes = append(nodes, replay.Node{Name: n.name, GPUType: n.typ, MemMiB: t.MemMiB, TFLOPS: t.TFLOPS, GPUs: len(n.gpus),
			Power: p, GPU: c.gpu})
	}
	now := l.now()
	var jobs []replay.Job
	for _, id := range slicesSortedKeys(s.jobs) {
		r := &s.jobs[id].rec
		rj := replay.Job{ID: r.ID, Submit: r.SubmittedAt, GPUs: r.Ran.GPUs, GPUType: r.Ran.Type, Seconds: r.Ran.Seconds, User: r.User}
		if r.State == api.Running && r.StartedAt != nil {
			rj.Seconds += max(now.Sub(*r.StartedAt).Seconds(), 0)
			rj.GPUs, rj.GPUType = len(r.Alloc), s.jobGPUType(r)
		}
		if rj.Seconds > 0 && rj.GPUs > 0 && rj.GPUType != "" {
			jobs = append(jobs, rj)
		}
	}
	return nodes, jobs
}

// anyRunning reports whether a job runs. Called with s.mu held.
func (l *Live) anyRunning() bool {
	for _, j := range s.active {
		if j.rec.State == api.Running {
			return true
		}
	}
	return false
}

// ran counts the jobs a replay runs.
func ran(jobs []replay.Job) int { return len(jobs) }

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
