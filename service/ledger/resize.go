package ledger

import (
	"fmt"
	"hash/fnv"
	"slices"
	"strconv"
	"time"

	"github.com/gpusched/gpusched/core/membership"
	"github.com/gpusched/gpusched/core/model"
	"github.com/gpusched/gpusched/service/api"
)

// What the scheduler's lifecycle derives from a record alone: a resized
// record, whether a record may be resized, notes for its history.

// Resized returns running job cur's record for its next membership: the
// member replicas of nodes that stay get their new GPUs, nodes new to the
// job get new replicas (numbered after the attempt's existing ones), the
// replicas of nodes that leave are marked Left; with notes on the changes
// for the job's history.
func Resized(cur *Record, next membership.Membership) (Record, []string) {
	rec := cur.Clone()
	kept := map[string]int{} // node → index of its member replica
	for i, rr := range rec.Replicas {
		if rr.Member() {
			kept[rr.Node] = i
		}
	}
	var notes []string
	for _, h := range next.Hosts {
		if i, ok := kept[h.Name]; ok {
			rec.Replicas[i].GPUs = slices.Clone(h.GPUs)
			delete(kept, h.Name)
			continue
		}
		id := api.ReplicaID(rec.ID, rec.Attempt, len(rec.Replicas))
		rec.Replicas = append(rec.Replicas, Replica{ID: id, Node: h.Name, GPUs: slices.Clone(h.GPUs)})
		notes = append(notes, "new replica "+id+" on "+h.Name)
	}
	for i := range rec.Replicas {
		if rr := &rec.Replicas[i]; rr.Member() {
			if _, gone := kept[rr.Node]; gone {
				rr.Left = true
				notes = append(notes, "replica "+rr.ID+" on "+rr.Node+" stops")
			}
		}
	}
	rec.Generation = next.Generation
	slots := next.Slots()
	rec.Alloc = make([]string, 0, len(slots))
	for _, sl := range slots {
		rec.Alloc = append(rec.Alloc, sl.String())
	}
	return rec, notes
}

// Resizable reports whether running job rec may be resized in place: it is
// not stopping, no replica of an earlier resize is still being stopped, and
// every member replica still runs.
func Resizable(rec *Record) bool {
	if rec.State != api.Running || rec.Stopping != "" || len(rec.Replicas) == 0 {
		return false
	}
	for _, rr := range rec.Replicas {
		if (rr.Member() && rr.Done) || (rr.Left && !rr.Done) {
			return false
		}
	}
	return true
}

// ResumeNote says, for the history, where a restarted attempt resumes
// from.
func ResumeNote(rec *Record, now time.Time) string {
	switch {
	case rec.Attempt <= 1:
		return ""
	case rec.LastCheckpointAt == nil:
		return "; no checkpoint reported: it starts from the beginning"
	}
	return fmt.Sprintf("; resumes from the checkpoint at step %d (reported %s ago)",
		rec.CheckpointSteps, ago(*rec.LastCheckpointAt, now))
}

// CheckpointNote describes a job's latest checkpoint for its history (in
// the words of every shell, model.CheckpointNote), "" when it has none.
func CheckpointNote(rec *Record, now time.Time) string {
	if rec.LastCheckpointAt == nil {
		return ""
	}
	return model.CheckpointNote(rec.CheckpointSteps, ago(*rec.LastCheckpointAt, now))
}

// ago writes how long before now t was, rounded to 100 ms, as the
// checkpoint notes do.
func ago(t, now time.Time) string { return now.Sub(t).Round(100 * time.Millisecond).String() }

// PickPort picks the attempt's MASTER_PORT: a hash of the replica ID prefix
// in the range of n ports from base, moved on past the ports in used (those
// of other running jobs whose master is the same node), which it joins.
func PickPort(rec *Record, used map[int]bool, base, n int) int {
	h := fnv.New32a()
	h.Write([]byte(rec.ID + "." + strconv.Itoa(rec.Attempt)))
	p := base + int(h.Sum32()%uint32(n))
	for k := range n {
		if q := base + (p-base+k)%n; !used[q] {
			p = q
			break
		}
	}
	used[p] = true
	return p
}
