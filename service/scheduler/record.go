package scheduler

import (
	"github.com/gpusched/gpusched/service/jobs"
	"github.com/gpusched/gpusched/service/ledger"
)

// The durable records are package ledger's.
type (
	record     = ledger.Record
	replicaRec = ledger.Replica
	nodeRecord = ledger.Node
)

// Why a running job's replicas are being stopped (record.Stopping).
const (
	stopCancel  = "cancel"  // the user cancelled it: cancelled when gone
	stopPreempt = "preempt" // the plan preempted, moved or resized it: queued again
	stopFail    = "fail"    // a replica failed or a node was lost: failed
)

// job is the scheduler's view of one job (package jobs).
type job = jobs.Job

func ptr[T any](v T) *T { return &v }
