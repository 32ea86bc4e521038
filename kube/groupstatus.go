package kube

import (
	"encoding/json"
	"fmt"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Condition types and reasons of Volcano's PodGroups, as vc-scheduler's
// gang plugin writes them.
const (
	vcCondUnschedulable = "Unschedulable"
	vcCondScheduled     = "Scheduled"
	vcReasonResources   = "NotEnoughResources"
	vcReasonTasks       = "NotEnoughTasks"
	vcReasonReady       = "tasks in gang are ready to be scheduled"
	// Phases of scheduler-plugins' PodGroups (its PodGroup controller's).
	cosPending    = "Pending"
	cosScheduling = "Scheduling"
	cosRunning    = "Running"
)

// groupState is what a round knows of a grouped job for its PodGroup's
// status: pods existing, bound and Running, the gang size, and why its
// pending pods wait ("" when none waits).
type groupState struct {
	pods, bound, running, min int
	why                       string
	incomplete, placed        bool
}

// groupStatuses keeps every PodGroup of gpusched's pods (other than
// Volcano Jobs', volcano.go) in the status its own scheduler or
// controller would give it, writing only what changed.
func (r *round) groupStatuses() {
	for _, rj := range r.jobs {
		g := r.w.pgroups[rj.kj.key]
		if g == nil || g.owned || g.api == apiJobSet || rj.pending0().group == nil {
			continue
		}
		st := groupState{pods: len(rj.bound) + len(rj.pending), bound: len(rj.bound), min: g.min, why: rj.why}
		for _, p := range rj.bound {
			if p.running {
				st.running++
			}
		}
		st.incomplete = st.pods < g.min
		st.placed = st.bound >= g.min && !rj.kj.stopped
		sig, patch := groupPatch(g, st, r.now)
		if sig == "" || r.w.groupWant[rj.kj.key] == sig {
			continue
		}
		r.w.groupWant[rj.kj.key] = sig
		r.work.groups = append(r.work.groups, groupTask{gvr: g.api.gvr(), ns: g.Namespace, name: g.Name, key: rj.kj.key,
			status: g.api != apiVolcano, patch: patch})
	}
}

// groupPatch returns the merge patch of a PodGroup's status for st and a
// signature of it without times ("" when nothing is to be written).
func groupPatch(g *podGroup, st groupState, now time.Time) (string, []byte) {
	var status map[string]any
	at := metav1.NewTime(now).Rfc3339Copy()
	switch g.api {
	case apiVolcano:
		status = volcanoStatus(st)
	case apiCoscheduling:
		status = map[string]any{"phase": cosPhase(st), "running": st.running}
	case apiNative:
		cond := map[string]any{"type": condPodGroupScheduled, "status": "True", "reason": "Scheduled", "message": ""}
		if !st.placed {
			if g.scheduled == "True" {
				return "", nil // kube-scheduler never takes a True back
			}
			cond["status"], cond["reason"], cond["message"] = "False", "Unschedulable", st.why
		}
		sig, _ := json.Marshal(cond)
		cond["lastTransitionTime"], cond["observedGeneration"] = at, g.Generation
		status = map[string]any{"conditions": []any{cond}}
		b, _ := json.Marshal(map[string]any{"status": status})
		return string(sig), b
	}
	sig, _ := json.Marshal(status)
	if conds, ok := status["conditions"].([]any); ok {
		for _, c := range conds {
			c.(map[string]any)["lastTransitionTime"] = at
		}
	}
	b, _ := json.Marshal(map[string]any{"status": status})
	return string(sig), b
}

// volcanoStatus is the status vc-scheduler gives a PodGroup: Inqueue
// while it waits (gpusched admits at once), Running once its minimum is
// placed, the count of Running pods, and the gang plugin's condition.
func volcanoStatus(st groupState) map[string]any {
	phase, cond := podGroupInqueue, map[string]any{"type": vcCondScheduled, "status": "True", "reason": vcReasonReady, "message": ""}
	if st.placed {
		phase = podGroupRunning
	} else {
		reason := vcReasonResources
		if st.incomplete {
			reason = vcReasonTasks
		}
		cond = map[string]any{"type": vcCondUnschedulable, "status": "True", "reason": reason,
			"message": fmt.Sprintf("%d/%d tasks in gang unschedulable: %s", st.pods-st.bound, st.pods, st.why)}
	}
	return map[string]any{"phase": phase, "running": st.running, "conditions": []any{cond}}
}

// cosPhase is the phase scheduler-plugins' PodGroup controller gives a
// group: Pending while fewer pods than minMember exist, Running once
// minMember run, Scheduling between.
func cosPhase(st groupState) string {
	switch {
	case st.incomplete:
		return cosPending
	case st.running >= st.min:
		return cosRunning
	}
	return cosScheduling
}
