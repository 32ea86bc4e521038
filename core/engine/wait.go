package engine

// Wait reasons: what a shell tells the user about a waiting job, the same
// words in every shell (the service's job reasons, the Kubernetes mode's
// PodScheduled conditions).
const (
	// WaitNoNodes: there is no cluster to place on (a shell says which
	// nodes it lacks after it).
	WaitNoNodes = "no node is registered"
	// WaitBehind: the round did not get to the job (a strict order stopped
	// before it, or it is outranked).
	WaitBehind = "waiting behind jobs ahead in the queue"
	// WaitBlocked: the job could run on the cluster, but not on the GPUs
	// free now.
	WaitBlocked = "waiting for free GPUs"
	// WaitHeld: the job was placed, but its GPUs are still held by a job
	// being stopped for it.
	WaitHeld = "placed; waiting for the GPUs of a job whose replicas are being stopped"
	// WaitNeverFits: no GPU type of the cluster can ever run the job.
	WaitNeverFits = "does not fit on the cluster as it is now (GPU count, type or memory); stays queued until a fitting node registers"
	// WaitPausedPrefix starts the reason of a job the placer held back;
	// the placer's own reason follows.
	WaitPausedPrefix = "held back by the placer: "
)

// WaitReason returns the wait reason of a waiting job that decision d is
// about, and false when d does not make the job wait (Placed, Preempted,
// Resized and Migrated decisions). A placed job that a shell could not
// start yet waits for WaitHeld. A job blocked by a resource besides GPUs
// (free GPUs there were, on nodes short of it) waits for that resource:
// "waiting for free cpu: not enough free cpu on the nodes ...".
func WaitReason(d Decision) (string, bool) {
	switch d.Status {
	case Blocked:
		if res := ShortResource(d.Reason); res != "" {
			return "waiting for free " + res + ": " + d.Reason, true
		}
		return WaitBlocked, true
	case Unschedulable:
		return WaitNeverFits, true
	case Paused:
		return WaitPausedPrefix + d.Reason, true
	}
	return "", false
}
