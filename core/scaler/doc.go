// Package scaler holds gpusched's elastic scalers, stage 4 of a scheduling
// round (engine.Scaler): they change the GPU counts of elastic jobs within
// [MinGPUs, MaxGPUs], one replica at a time, through the round's
// engine.Resizer. Resources are counted in GPUs; a replica is
// JobSpec.Replica() GPUs (r1 in seed 000).
//
// Threshold is seed 000's periodic policy (Volcano + Horovod), with the
// readings of ../shared/seeds/README.md where the original contradicts
// itself: shrink when T > st; the shrink loop ends at each job's minimum;
// the used resources a exclude the elastic surplus (the GPUs elastic jobs
// hold above their minimums) and EU is that surplus, so that
// M = (A − a)·p is the share of the capacity that guaranteed work leaves
// idle. The budgets are computed without dividing by M:
// (mt − T)·M = mt·M − EU and (T − mt)·M = EU − mt·M, which also covers
// M = 0. A candidate that cannot take one more replica (no free GPU of its
// type, or a replica larger than what is left of the budget) leaves the
// walk; the walk ends when no candidate is left.
//
// Fulfillment is seed 001's rule (PaddlePaddle EDL): idle GPUs go, one
// replica at a time, to the job with the lowest fulfillment score
// (cur − min)/(max − min), ties to the larger per-replica GPU request, then
// CPU, then memory, then the earlier arrival; never beyond MaxLoad of the
// cluster's GPUs. A waiting job whose minimum does not fit takes replicas,
// one at a time, from the job with the highest score that is above its
// minimum (engine.Donor); gpusched's reading considers only donors on a
// GPU type the waiting job can use (a replica of another type frees
// nothing it could run on), ties to the later arrival. When that job is at
// its minimum, nobody can give and the new job waits.
package scaler
