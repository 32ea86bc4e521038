package sim

import "github.com/gpusched/gpusched/core/model"

// stage delays the progress of job j, which has just started, by the time
// its dataset takes to reach its nodes (seed 002): the staging time from
// the storage device of its upload (Config.Network), for the slowest node
// of its allocation. It adds to the restart pause of a restart.
func (r *run) stage(j *model.Job) {
	net := r.cfg.Network
	if net == nil || j.Spec.DatasetMB <= 0 {
		return
	}
	d := net.Staging(net.Upload(j.Spec.Upload).Storage, j.Spec.DatasetMB, j.Alloc)
	if d <= 0 {
		return
	}
	j.Resume += d
	r.predictFinish(j)
}
