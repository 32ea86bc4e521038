package scheduler

import (
	"fmt"
	"strings"
	"time"

	"maps"
	"slices"

	"github.com/gpusched/gpusched/core/model"
	"github.com/gpusched/gpusched/service/api"
	"github.com/gpusched/gpusched/service/nodes"
)

// report applies the replicas an agent lists (in a status report or a
// registration): it records the exits of replicas it expects, counts as
// gone the removed replicas that an agent which has applied the work
// without them no longer lists, and returns the exited replicas it may
// acknowledge, all results being durable. version is the work version the
// agent had applied (0: unknown; its last long-poll tells).
func (s *Scheduler) report(n *node, reps []api.ReplicaStatus, version int64) ([]string, error) {
	now := s.now()
	b := s.newBatch()
	acked := []string{}
	listed := make(map[string]bool, len(reps))
	for _, rs := range reps {
		listed[rs.ID] = true
		if rs.Progress != nil {
			if j, _ := s.expected(b, n, rs.ID); j != nil {
				s.applyProgress(b, j, replicaProgress(rs.Progress, now), now)
			}
		}
		if rs.Phase != api.ReplicaExited {
			continue
		}
		acked = append(acked, rs.ID)
		j, i := s.expected(b, n, rs.ID)
		switch {
		case j == nil:
		case rs.Lost:
			why := strings.TrimPrefix(rs.Error, "lost: ")
			if why == "" {
				why = "its agent reports it lost"
			}
			s.lose(b, j, i, why, false, now, now)
		default:
			s.exit(b, j, i, rs, now)
		}
	}
	if version <= 0 || version > n.Version {
		version = n.Applied
	}
	for _, id := range slices.Sorted(maps.Keys(n.Removed)) {
		if listed[id] || version < n.Removed[id].At {
			continue
		}
		if j, i := s.expected(b, n, id); j != nil {
			s.gone(b, j, i, "stopped before it started", now)
		} else {
			delete(n.Removed, id)
		}
	}
	s.settle(b, now)
	if err := b.run("record replica results from " + n.Name); err != nil {
		return nil, err
	}
	return acked, nil
}

// expected returns the job and index of replica id if it is a replica of
// a running job on node n whose end is not recorded yet.
func (s *Scheduler) expected(b *batch, n *node, id string) (*job, int) {
	jid, _, _, ok := api.ParseReplicaID(id)
	if !ok {
		return nil, -1
	}
	j := s.tab.Active[jid]
	if j == nil {
		return nil, -1
	}
	rec := b.peek(j)
	i := rec.ReplicaIndex(id)
	if rec.State != api.Running || i < 0 || rec.Replicas[i].Done || rec.Replicas[i].Node != n.Name {
		return nil, -1
	}
	return j, i
}

// setAcked sets the exited replicas the node's work acknowledges; new
// acknowledgements give the work a new version so that a waiting long-poll
// delivers them.
func (s *Scheduler) setAcked(n *node, acked []string) {
	if n.SetAcked(acked) {
		s.bump(n)
	}
}

// checkNodes marks down the nodes not heard from within the heartbeat
// timeout.
func (s *Scheduler) checkNodes() {
	s.mu.Lock()
	defer s.mu.Unlock()
	now := s.now()
	for _, name := range slices.Sorted(maps.Keys(s.tab.Nodes)) {
		n := s.tab.Nodes[name]
		if !n.Ready || now.Sub(n.LastSeen) <= s.cfg.HeartbeatTimeout {
			continue
		}
		why := fmt.Sprintf("no heartbeat for %s", now.Sub(n.LastSeen).Round(time.Second))
		if n.Pending {
			why = "it did not register again after the server restarted"
		}
		if err := s.nodeDown(n, now, why); err != nil {
			return
		}
	}
}

// nodeDown marks node n down: its replicas are lost; an elastic job that
// keeps its minimum GPUs without them continues, other jobs are queued
// again (lose); the cluster is rebuilt without the node.
func (s *Scheduler) nodeDown(n *node, now time.Time, why string) error {
	s.log.Warn("node lost", "node", n.Name, "why", why)
	b := s.newBatch()
	ids := append(slices.Sorted(maps.Keys(n.Work)), slices.Sorted(maps.Keys(n.Removed))...)
	for _, id := range ids {
		if j, i := s.expected(b, n, id); j != nil {
			s.lose(b, j, i, why, true, n.LastSeen, now)
		}
	}
	s.settle(b, now)
	r := n.Record()
	r.Down = true
	b.putNode(r)
	if err := b.run("mark node " + n.Name + " down"); err != nil {
		return err
	}
	n.Ready, n.Pending, n.Acked = false, false, nil
	clear(n.Work)
	clear(n.Removed)
	s.bump(n)
	s.dirty = true
	s.notify()
	return nil
}

// Nodes returns every node the scheduler knows, ready or down, by name.
func (s *Scheduler) Nodes() []api.Node {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]api.Node, 0, len(s.tab.Nodes))
	for _, n := range s.tab.NodeList() {
		name, used := n.Name, s.tab.UsedGPUs(n.Name)
		v := n.View(used)
		v.Used = api.FormatResources(s.usedResources(n))
		v.Energy = s.energy.NodeView(s.world, name, used)
		out = append(out, v)
	}
	return out
}

// usedResources returns what the jobs on node n hold of its resources
// besides GPUs: every resource the node declares (0 when none is held) and
// any other that jobs hold there; nil when the cluster models none.
func (s *Scheduler) usedResources(n *node) model.Resources {
	i, ok := s.tab.NodeIdx[n.Name]
	if !ok || s.tab.State == nil || !s.tab.Cluster.Vectored() {
		return nil
	}
	return nodes.UsedResources(n, s.tab.Cluster, s.tab.State.Used(i))
}
