package agent

import (
	"time"

	"github.com/gpusched/gpusched/service/api"
	"github.com/gpusched/gpusched/service/shim"
)

// pollProgress reads replica p's progress file and records what it
// reports in p's status; a new checkpoint is saved and reported at once,
// other progress goes with the next heartbeat.
func (a *Agent) pollProgress(p *proc) {
	if p.dir == "" {
		return
	}
	w := read(a.reps, p, func(p *proc) shim.ProgressWatch { return p.progress })
	reps, bad, err := w.Poll(shim.ProgressPath(p.dir))
	if err != nil {
		a.log.Debug("read progress file", "replica", p.spec.ID, "err", err)
		return
	}
	if bad > 0 {
		a.log.Debug("progress file lines not understood (want \"steps=N [checkpoint=1]\")",
			"replica", p.spec.ID, "lines", bad)
	}
	now := time.Now()
	ckpt := false
	a.update(p, func(p *proc) {
		p.progress = w
		if len(reps) == 0 {
			return
		}
		cur := api.ReplicaProgress{}
		if p.status.Progress != nil {
			cur = *p.status.Progress
		}
		cur.Steps, cur.At = reps[len(reps)-1].Steps, now
		for _, r := range reps {
			if r.Checkpoint {
				cur.CheckpointSteps, cur.CheckpointAt, ckpt = r.Steps, &now, true
			}
		}
		p.status.Progress = &cur
	})
	if ckpt {
		a.save(p)
		a.report()
	}
}
