package logs

import (
	"errors"
	"sync"
	"testing"

	"github.com/gpusched/gpusched/service/api"
	"github.com/gpusched/gpusched/service/jobs"
	"github.com/gpusched/gpusched/service/ledger"
	"github.com/gpusched/gpusched/service/nodes"
)

// shell is a Jobs of one node "n1" and one job "j1" at attempt 2, running
// with several replicas.
type shell struct{}

func (shell) NodeKnown(name string) bool { return name == "n1" }

func (shell) Job(id string) (attempt int, final, multi, ok bool) {
	if id != "j1" {
		return 0, false, false, false
	}
	return 2, false, true, true
}

// TestRoomAppend: a chunk must name a replica of its job, a non-negative
// offset, a registered node and a started attempt; an accepted one is
// stored and fires the signal.
func TestRoomAppend(t *testing.T) {
	var sig Signal
	r := NewRoom(New(t.TempDir()), &sig, &sync.Mutex{}, shell{})
	for _, tc := range []struct {
		name, node string
		chunk      api.LogChunk
		field      string
		kind       error
	}{
		{"not a replica", "n1", api.LogChunk{Job: "j1", Replica: "junk"}, "replica", nil},
		{"another job's", "n1", api.LogChunk{Job: "j1", Replica: "j2.1.0"}, "replica", nil},
		{"negative offset", "n1", api.LogChunk{Job: "j1", Replica: "j1.1.0", Offset: -1}, "offset", nil},
		{"unknown node", "ghost", api.LogChunk{Job: "j1", Replica: "j1.1.0"}, "", api.ErrNotRegistered},
		{"unknown job", "n1", api.LogChunk{Job: "j9", Replica: "j9.1.0"}, "", api.ErrNotFound},
		{"future attempt", "n1", api.LogChunk{Job: "j1", Replica: "j1.3.0"}, "", api.ErrNotFound},
	} {
		_, err := r.Append(tc.node, tc.chunk)
		var fe *api.FieldError
		switch {
		case tc.field != "" && (!errors.As(err, &fe) || fe.Field != tc.field):
			t.Errorf("%s: err = %v, want a field error of %q", tc.name, err, tc.field)
		case tc.kind != nil && !errors.Is(err, tc.kind):
			t.Errorf("%s: err = %v, want %v", tc.name, err, tc.kind)
		}
	}
	changed := r.Changed()
	ack, err := r.Append("n1", api.LogChunk{Job: "j1", Replica: "j1.2.0", Data: []byte("hello")})
	if err != nil || ack.Length != 5 {
		t.Fatalf("Append = %+v, %v; want length 5", ack, err)
	}
	select {
	case <-changed:
	default:
		t.Error("an accepted chunk did not fire the signal")
	}
	if files, err := r.Files("j1"); err != nil || len(files) != 1 {
		t.Errorf("Files = %v, %v; want one log", files, err)
	}
}

// TestRoomStatus: a known job's status comes from the shell, an unknown
// one is not found.
func TestRoomStatus(t *testing.T) {
	r := NewRoom(New(t.TempDir()), &Signal{}, &sync.Mutex{}, shell{})
	if final, multi, err := r.Status("j1"); err != nil || final || !multi {
		t.Errorf("Status(j1) = %v, %v, %v; want false, true, nil", final, multi, err)
	}
	if _, _, err := r.Status("j9"); !errors.Is(err, api.ErrNotFound) {
		t.Errorf("Status(j9) err = %v, want ErrNotFound", err)
	}
}

// TestTable: the job table as Jobs — a known node, a job's attempt,
// whether it ended and whether it has several log files.
func TestTable(t *testing.T) {
	tab := jobs.NewTable("")
	tab.Nodes["n1"] = &nodes.Node{Name: "n1"}
	for _, c := range []struct {
		id       string
		attempt  int
		st       api.State
		replicas int
	}{{"j1", 1, api.Running, 1}, {"j2", 2, api.Succeeded, 1}, {"j3", 1, api.Queued, 2}} {
		j := &jobs.Job{Rec: ledger.Record{Job: api.Job{ID: c.id, State: c.st, Attempt: c.attempt}}}
		j.Rec.Replicas = make([]ledger.Replica, c.replicas)
		tab.Jobs[c.id] = j
	}
	lt := Table{T: &tab}
	if !lt.NodeKnown("n1") || lt.NodeKnown("n2") {
		t.Error("NodeKnown: want n1 only")
	}
	for _, c := range []struct {
		id                 string
		attempt            int
		final, multi, okay bool
	}{{"j1", 1, false, false, true}, {"j2", 2, true, true, true}, {"j3", 1, false, true, true}, {"j9", 0, false, false, false}} {
		a, f, m, ok := lt.Job(c.id)
		if a != c.attempt || f != c.final || m != c.multi || ok != c.okay {
			t.Errorf("%s: %d %v %v %v, want %d %v %v %v", c.id, a, f, m, ok, c.attempt, c.final, c.multi, c.okay)
		}
	}
}
