package scheduler

import (
	"context"
	"slices"
	"time"

	"github.com/gpusched/gpusched/config"
	"github.com/gpusched/gpusched/core/model"
	"github.com/gpusched/gpusched/service/api"
	"github.com/gpusched/gpusched/service/nodes"
)

// The agent protocol (docs/AGENT.md): an agent registers its node, long
// polls its node's work (the replicas it must run, versioned) and reports
// the replicas it runs (a heartbeat, with their exits, progress and the
// node's power), and uploads their output (logs.go). These methods are its
// semantics; package server carries them over HTTP.

// Register adds or refreshes node reg.Name, taking the replicas it reports
// (a restarted agent's, or those of a node that comes back), and returns
// the heartbeat interval. A node that comes back with other GPUs first
// loses its old ones (their jobs: node lost). An invalid registration is
// an *api.FieldError naming the field; nothing changes then.
func (s *Scheduler) Register(reg api.Register) (api.RegisterReply, error) {
	gpus, capa, err := reg.Check()
	if err != nil {
		return api.RegisterReply{}, err
	}
	if err := s.register(&reg, gpus, capa); err != nil {
		return api.RegisterReply{}, err
	}
	return api.RegisterReply{HeartbeatS: s.cfg.HeartbeatInterval.Seconds()}, nil
}

// CheckRegister validates a registration without acting on it (a
// transport checks it before it issues the node a credential).
func (s *Scheduler) CheckRegister(reg api.Register) error {
	_, _, err := reg.Check()
	return err
}

// register adds or refreshes a node. A node that comes back with other
// GPUs first loses its old ones (their jobs fail: node lost); one that
// comes back with another capacity keeps its jobs (they are charged to it
// even where they now exceed it).
func (s *Scheduler) register(reg *api.Register, gpus []api.GPU, capa model.Resources) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	now := s.now()
	n := s.tab.Nodes[reg.Name]
	if n != nil && n.Ready && !slices.Equal(n.GPUs, gpus) {
		if err := s.nodeDown(n, now, "it registered again with other GPUs"); err != nil {
			return err
		}
	}
	if n == nil || !n.Ready || n.Pending || n.Addr != reg.Addr || !slices.Equal(n.GPUs, gpus) || !n.Capacity.Equal(capa) {
		b := s.newBatch()
		b.putNode(nodeRecord{Name: reg.Name, Addr: reg.Addr, GPUs: gpus, Capacity: api.FormatResources(capa)})
		if err := b.run("register node " + reg.Name); err != nil {
			return err
		}
		if n == nil {
			n = s.addNode(nodes.New(reg.Name, reg.Addr, gpus, capa))
		}
		if n.Addr != reg.Addr {
			n.Addr = reg.Addr
			s.refreshWork(n)
		}
		n.GPUs, n.Type, n.Capacity, n.Ready, n.Pending = gpus, gpus[0].Type, capa, true, false
		s.dirty = true
		s.log.Info("node registered", "node", n.Name, "addr", n.Addr, "gpus", len(gpus), "type", n.Type,
			"capacity", config.FormatResources(capa))
	}
	n.LastSeen = now
	acked, err := s.report(n, reg.Replicas, 0)
	if err != nil {
		return err
	}
	s.setAcked(n, acked)
	s.notify()
	return nil
}

// refreshWork rebuilds the replicas of jobs whose master is node m (its
// address is their MASTER_ADDR). The IDs stay; agents keep what runs.
func (s *Scheduler) refreshWork(m *node) {
	for _, j := range s.tab.Active {
		rec := &j.Rec
		if rec.State != api.Running || rec.Stopping != "" || rec.Master() != m.Name {
			continue
		}
		s.refreshJob(j)
	}
}

// readyNode returns the named node if it is registered and ready, else
// its ErrNotRegistered.
func (s *Scheduler) readyNode(name string) (*node, error) {
	n := s.tab.Nodes[name]
	if n == nil || !n.Ready || n.Pending {
		return nil, api.NotRegistered(name)
	}
	return n, nil
}

// Work is the long poll of node name's work: it returns the work as soon as
// its version differs from after (the version the agent has applied), or
// once wait has passed, ctx has ended (the agent went away) or the
// scheduler stops. A poll counts as a heartbeat, before and after its wait
// (not after it when ctx ended: a killed agent's poll is no sign of life).
// ErrNotRegistered for a node that is not registered.
func (s *Scheduler) Work(ctx context.Context, name string, after int64, wait time.Duration) (api.Work, error) {
	s.mu.Lock()
	n, err := s.readyNode(name)
	if err != nil {
		s.mu.Unlock()
		return api.Work{}, err
	}
	n.LastSeen = s.now()
	n.NoteApplied(after)
	if after == n.Version {
		ch := n.Changed
		s.mu.Unlock()
		nodes.Wait(ctx, ch, s.stopped, wait)
		s.mu.Lock()
		if ctx.Err() == nil && n.Ready {
			n.LastSeen = s.now()
		}
	}
	work := n.Snapshot()
	work.Probes = s.energy.ProbeList(s.world, n.Name)
	s.mu.Unlock()
	return work, nil
}

// Status takes a status report of node name (a heartbeat with the replicas
// it runs, their exits and progress, and its power reading) and returns
// the node's work, whose Acked lists the exits now durable.
// ErrNotRegistered for a node that is not registered.
func (s *Scheduler) Status(name string, st api.Status) (api.Work, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	n, err := s.readyNode(name)
	if err != nil {
		return api.Work{}, err
	}
	n.LastSeen, n.Unmetered = s.now(), st.Power == nil
	acked, err := s.report(n, st.Replicas, st.Version)
	if err != nil {
		return api.Work{}, err
	}
	n.NoteApplied(st.Version)
	s.setAcked(n, acked)
	s.energy.Reading(s.world, n.Name, st.Power)
	s.energy.Probes(s.world, n.Name, st.Probes)
	w := n.Snapshot()
	w.Probes = s.energy.ProbeList(s.world, n.Name)
	return w, nil
}
