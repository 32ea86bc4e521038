package sim

import "github.com/gpusched/gpusched/core/model"

// finishEvent is a predicted finish of a job; it is stale when the job's
// version changed since (preempted or resized).
type finishEvent struct {
	t       model.Time
	job     int // trace index = Seq
	version int
}

// eventQueue is a min-heap of finishes by (time, job).
type eventQueue []finishEvent

func (q eventQueue) Len() int { return len(q) }
func (q eventQueue) Less(i, j int) bool {
	if q[i].t != q[j].t {
		return q[i].t < q[j].t
	}
	return q[i].job < q[j].job
}
func (q eventQueue) Swap(i, j int) { q[i], q[j] = q[j], q[i] }
func (q *eventQueue) Push(x any)   { *q = append(*q, x.(finishEvent)) }
func (q *eventQueue) Pop() any {
	old := *q
	e := old[len(old)-1]
	*q = old[:len(old)-1]
	return e
}
