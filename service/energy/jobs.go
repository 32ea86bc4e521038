package energy

import (
	"cmp"
	"slices"

	"github.com/gpusched/gpusched/service/api"
	"github.com/gpusched/gpusched/service/ledger"
	"github.com/gpusched/gpusched/service/replay"
)

// Job is a job of the shell as the energy report, its replay and the
// metrics read it (World.Jobs).
type Job struct {
	Rec *ledger.Record
	// State is its state as the API shows it; Queue its queue (the default
	// queue's name when it names none).
	State api.State
	Queue string
	// GPUType is, for a running job, the GPU type of its live replicas
	// ("" when they are on several types).
	GPUType string
}

// Prepare returns, under the shell's lock, the energy report's accounts
// (Report, with the jobs' energy), the inputs of its pack replay and the
// modelled energy of the run; AddReplay completes the report outside the
// lock. policy and placer name the shell's stages.
func (l *Live) Prepare(w World, policy, placer string) (api.EnergyReport, []replay.Node, []replay.Job, float64) {
	jobs := w.Jobs()
	rep := l.Report(w, policy, placer, jobsEnergy(jobs))
	nodes, rjobs := l.ReplayInputs(w, jobs)
	running := false
	for _, j := range jobs {
		running = running || j.Rec.State == api.Running
	}
	return rep, nodes, rjobs, l.ModelledRun(w, l.now(), running)
}

// jobsEnergy returns the jobs with energy, oldest first, for the report.
func jobsEnergy(jobs []Job) []api.JobEnergyUse {
	out := []api.JobEnergyUse{}
	for _, j := range jobs {
		r := j.Rec
		if r.EnergyKWh <= 0 {
			continue
		}
		mod := min(r.EnergyModelledKWh, r.EnergyKWh)
		out = append(out, api.JobEnergyUse{ID: r.ID, Name: r.Name, User: r.User, Queue: j.Queue, State: j.State,
			KWh: r.EnergyKWh, ModelledKWh: mod, Measured: mod == 0})
	}
	return out
}

// ReplayInputs returns the ready nodes and, of jobs, those that ran, for
// the replay, by name and by ID.
func (l *Live) ReplayInputs(w World, jobs []Job) ([]replay.Node, []replay.Job) {
	var nodes []replay.Node
	for _, name := range w.NodeNames() {
		n, ok := w.Node(name)
		if !ok || !n.Ready {
			continue
		}
		t := w.GPUType(n.Type)
		rn := replay.Node{Name: n.Name, GPUType: n.Type, MemMiB: t.MemMiB, TFLOPS: t.TFLOPS, GPUs: len(n.GPUs)}
		l.ReplayPower(w, &rn)
		nodes = append(nodes, rn)
	}
	now := l.now()
	var out []replay.Job
	for _, j := range byID(jobs) {
		r := j.Rec
		rj := replay.Job{ID: r.ID, Submit: r.SubmittedAt, GPUs: r.Ran.GPUs, GPUType: r.Ran.Type, Seconds: r.Ran.Seconds, User: r.User}
		if r.State == api.Running && r.StartedAt != nil {
			rj.Seconds += max(now.Sub(*r.StartedAt).Seconds(), 0)
			rj.GPUs, rj.GPUType = len(r.Alloc), j.GPUType
		}
		if rj.Seconds > 0 && rj.GPUs > 0 && rj.GPUType != "" {
			out = append(out, rj)
		}
	}
	return nodes, out
}

// jobUses returns every job's energy for the metrics, by ID.
func jobUses(jobs []Job) []JobUse {
	out := make([]JobUse, 0, len(jobs))
	for _, j := range byID(jobs) {
		out = append(out, JobUse{ID: j.Rec.ID, KWh: j.Rec.EnergyKWh, FinishedAt: j.Rec.FinishedAt})
	}
	return out
}

// byID returns jobs sorted by ID.
func byID(jobs []Job) []Job {
	jobs = slices.Clone(jobs)
	slices.SortFunc(jobs, func(a, b Job) int { return cmp.Compare(a.Rec.ID, b.Rec.ID) })
	return jobs
}
