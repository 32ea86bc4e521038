// Package metrics turns per-job records of a run into the summary that
// `gpusched sim` prints (DESIGN.md: JCT = finish − submit; makespan = last
// finish − first submit; gpu_util = GPU-seconds held ÷ (cluster GPUs ×
// makespan); avg_queue_s = mean time from submit to first start).
package metrics
