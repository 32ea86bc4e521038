package jobs

import (
	"go/parser"
	"go/token"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gpusched/gpusched/service/api"
	"github.com/gpusched/gpusched/service/ledger"
	"github.com/gpusched/gpusched/service/nodes"
)

var t0 = time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)

// newJob returns job id of sequence seq in state st, submitted at t0.
func newJob(id string, seq int, st api.State) *Job {
	rec := ledger.NewRecord(id, api.JobSpec{Command: []string{"x"}, GPUs: 1}, nil, t0)
	rec.State = st
	return &Job{Rec: rec, Seq: seq}
}

// TestView: the state and reason a job shows, by round — a wait reason of
// the latest round, else the round's default; paused only when the placer
// held it back in the latest round.
func TestView(t *testing.T) {
	for _, c := range []struct {
		name       string
		st         api.State
		reason     string
		waitReason string
		waitRound  int64
		pauseRound int64
		wantState  api.State
		wantReason string
	}{
		{"queued: the round's default", api.Queued, "", "", 0, 0, api.Queued, "behind"},
		{"queued: its own reason this round", api.Queued, "", "no GPU", 3, 0, api.Queued, "no GPU"},
		{"queued: an old reason gives way to the default", api.Queued, "", "no GPU", 2, 0, api.Queued, "behind"},
		{"preempted: its reason, then why it waits", api.Preempted, "preempted by j9", "", 0, 0, api.Preempted, "preempted by j9; behind"},
		{"paused this round", api.Queued, "", "held back", 3, 3, api.Paused, "held back"},
		{"paused in an earlier round: queued", api.Queued, "", "", 0, 2, api.Queued, "behind"},
		{"running: no wait reason", api.Running, "", "no GPU", 3, 3, api.Running, ""},
	} {
		tab := NewTable("behind")
		tab.Rounds = 3
		j := newJob("j1", 1, c.st)
		j.Rec.Reason, j.WaitReason, j.WaitRound, j.PauseRound = c.reason, c.waitReason, c.waitRound, c.pauseRound
		j.Rec.Events = []api.JobEvent{{Event: "submitted"}}
		v := tab.View(j, false)
		if v.State != c.wantState || v.Reason != c.wantReason || v.Events != nil || v.Alloc == nil {
			t.Errorf("%s: state %s reason %q events %v alloc %v; want %s %q, no events, an empty alloc",
				c.name, v.State, v.Reason, v.Events, v.Alloc, c.wantState, c.wantReason)
		}
		if got := tab.ViewState(j); got != c.wantState {
			t.Errorf("%s: ViewState %s, want %s", c.name, got, c.wantState)
		}
		if v := tab.View(j, true); len(v.Events) != 1 {
			t.Errorf("%s: events %v, want the one", c.name, v.Events)
		}
	}
}

// TestReads: the table's lists — by sequence, ended before a cutoff, the
// model jobs, the nodes by name, the counts by state.
func TestReads(t *testing.T) {
	tab := NewTable("")
	for _, j := range []*Job{newJob("j3", 3, api.Succeeded), newJob("j1", 1, api.Failed), newJob("j2", 2, api.Running),
		newJob("j4", 4, api.Cancelled)} {
		tab.Jobs[j.Rec.ID] = j
	}
	late := t0.Add(time.Hour)
	tab.Jobs["j4"].Rec.FinishedAt = &late
	tab.Active["j2"] = tab.Jobs["j2"]
	ids := func(list []*Job) []string {
		var out []string
		for _, j := range list {
			out = append(out, j.Rec.ID)
		}
		return out
	}
	if got := ids(BySeq(tab.Jobs)); !slices.Equal(got, []string{"j1", "j2", "j3", "j4"}) {
		t.Errorf("BySeq %v", got)
	}
	if got := ids(tab.EndedBefore(t0.Add(time.Minute))); !slices.Equal(got, []string{"j1", "j3"}) {
		t.Errorf("EndedBefore %v, want j1 j3 (j2 runs, j4 ended later)", got)
	}
	if got := tab.Models(); len(got) != 1 || got[0] != nil {
		t.Errorf("Models %v, want j2's (nil: not modelled here)", got)
	}
	for _, n := range []string{"n2", "n10", "n1"} {
		tab.Nodes[n] = &nodes.Node{Name: n}
	}
	var names []string
	for _, n := range tab.NodeList() {
		names = append(names, n.Name)
	}
	if !slices.Equal(names, []string{"n1", "n10", "n2"}) {
		t.Errorf("NodeList %v", names)
	}
	n := tab.StateCounts()
	if len(n) != len(api.States()) || n[api.Succeeded] != 1 || n[api.Failed] != 1 || n[api.Running] != 1 ||
		n[api.Cancelled] != 1 || n[api.Queued] != 0 {
		t.Errorf("StateCounts %v", n)
	}
	if tab.UsedGPUs("n1") != 0 {
		t.Error("GPUs used without a model")
	}
	if _, ok := tab.ProfileTable(); ok {
		t.Error("a profile table without a model")
	}
}

// TestBelowTheRooms: the table sits below the rooms that read it — its
// non-test files import, of the service, only api, ledger and nodes.
func TestBelowTheRooms(t *testing.T) {
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	allowed := []string{"api", "ledger", "nodes"}
	checked := 0
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(token.NewFileSet(), name, nil, parser.ImportsOnly)
		if err != nil {
			t.Fatal(err)
		}
		for _, imp := range f.Imports {
			p, _ := strconv.Unquote(imp.Path.Value)
			if room, ok := strings.CutPrefix(p, "github.com/gpusched/gpusched/service/"); ok && !slices.Contains(allowed, room) {
				t.Errorf("%s imports %s: the job table may not depend on a room that reads it", name, p)
			}
		}
		checked++
	}
	if checked < 2 {
		t.Errorf("checked only %d files", checked)
	}
}
