package server

import (
	"net/http"
	"slices"
	"strconv"
	"time"

	"github.com/gpusched/gpusched/service/api"
)

// handleRegister is POST /v1/agents/register.
func (s *Server) handleRegister(w http.ResponseWriter, r *http.Request) {
	var reg api.Register
	if !readJSON(w, r, &reg) {
		return
	}
	gpus, ferr := checkRegister(&reg)
	if ferr != nil {
		writeError(w, http.StatusBadRequest, ferr.Field, "%s", ferr.Error())
		return
	}
	if err := s.register(&reg, gpus); err != nil {
		s.writeFailure(w, err)
		return
	}
	writeJSON(w, http.StatusOK, api.RegisterReply{HeartbeatS: s.cfg.HeartbeatInterval.Seconds()})
}

// register adds or refreshes a node. A node that comes back with other
// GPUs first loses its old ones (their jobs fail: node lost).
func (s *Server) register(reg *api.Register, gpus []api.GPU) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	now := s.now()
	n := s.nodes[reg.Name]
	if n != nil && n.ready && !slices.Equal(n.gpus, gpus) {
		if err := s.nodeDown(n, now, "it registered again with other GPUs"); err != nil {
			return err
		}
	}
	if n == nil || !n.ready || n.pending || n.addr != reg.Addr || !slices.Equal(n.gpus, gpus) {
		b := s.newBatch()
		b.putNode(nodeRecord{Name: reg.Name, Addr: reg.Addr, GPUs: gpus})
		if err := b.run("register node " + reg.Name); err != nil {
			return err
		}
		if n == nil {
			n = s.addNode(newNode(reg.Name, reg.Addr, gpus))
		}
		if n.addr != reg.Addr {
			n.addr = reg.Addr
			s.refreshWork(n)
		}
		n.gpus, n.typ, n.ready, n.pending = gpus, gpus[0].Type, true, false
		s.dirty = true
		s.log.Info("node registered", "node", n.name, "addr", n.addr, "gpus", len(gpus), "type", n.typ)
	}
	n.lastSeen = now
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
func (s *Server) refreshWork(m *node) {
	for _, j := range s.active {
		rec := &j.rec
		if rec.State != api.Running || rec.Stopping != "" || rec.master() != m.name {
			continue
		}
		s.refreshJob(j)
	}
}

// readyNode returns the named node if it is registered and ready.
func (s *Server) readyNode(w http.ResponseWriter, name string) *node {
	n := s.nodes[name]
	if n == nil || !n.ready || n.pending {
		writeError(w, http.StatusNotFound, "", "node %q is not registered: register again (POST /v1/agents/register)", name)
		return nil
	}
	return n
}

// handleWork is GET /v1/agents/{name}/work?after=V[&wait=D]: the node's
// work as soon as its version differs from V, or after the wait.
func (s *Server) handleWork(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	after, err := strconv.ParseInt(q.Get("after"), 10, 64)
	if q.Get("after") == "" {
		after, err = 0, nil
	}
	if err != nil || after < 0 {
		writeError(w, http.StatusBadRequest, "after", "after=%q: want the version of the work the agent has applied", q.Get("after"))
		return
	}
	wait, ok := parseWait(q.Get("wait"), s.cfg.PollTimeout)
	if !ok {
		writeError(w, http.StatusBadRequest, "wait", "wait=%q: want seconds or a duration such as 25s, at most %s", q.Get("wait"), MaxPollTimeout)
		return
	}
	name := r.PathValue("name")
	s.mu.Lock()
	n := s.readyNode(w, name)
	if n == nil {
		s.mu.Unlock()
		return
	}
	n.lastSeen = s.now()
	if after <= n.version && after > n.applied {
		n.applied = after
	}
	if after == n.version {
		ch := n.changed
		s.mu.Unlock()
		s.waitWork(r, ch, wait)
		s.mu.Lock()
		if r.Context().Err() == nil && n.ready {
			// A poll whose client went away (a killed agent) is no sign
			// of life.
			n.lastSeen = s.now()
		}
	}
	work := n.snapshot()
	s.mu.Unlock()
	writeJSON(w, http.StatusOK, work)
}

// waitWork waits until the work changes, the wait ends, the client goes
// away or the server stops.
func (s *Server) waitWork(r *http.Request, changed <-chan struct{}, wait time.Duration) {
	t := time.NewTimer(wait)
	defer t.Stop()
	select {
	case <-changed:
	case <-t.C:
	case <-r.Context().Done():
	case <-s.stopped:
	}
}

// parseWait reads the wait parameter: seconds ("10", "0.5") or a Go
// duration ("10s"); empty gives def.
func parseWait(v string, def time.Duration) (time.Duration, bool) {
	if v == "" {
		return def, true
	}
	d, err := time.ParseDuration(v)
	if err != nil {
		f, ferr := strconv.ParseFloat(v, 64)
		if ferr != nil {
			return 0, false
		}
		d = time.Duration(f * float64(time.Second))
	}
	if d < 0 || d > MaxPollTimeout {
		return 0, false
	}
	return d, true
}

// handleStatus is POST /v1/agents/{name}/status: a heartbeat with the
// node's replicas; the answer is the node's work with the results stored.
func (s *Server) handleStatus(w http.ResponseWriter, r *http.Request) {
	var st api.Status
	if !readJSON(w, r, &st) {
		return
	}
	s.mu.Lock()
	n := s.readyNode(w, r.PathValue("name"))
	if n == nil {
		s.mu.Unlock()
		return
	}
	n.lastSeen = s.now()
	acked, err := s.report(n, st.Replicas, st.Version)
	if err != nil {
		s.mu.Unlock()
		s.writeFailure(w, err)
		return
	}
	if st.Version > n.applied && st.Version <= n.version {
		n.applied = st.Version
	}
	s.setAcked(n, acked)
	s.recordPower(n, st.Power)
	work := n.snapshot()
	s.mu.Unlock()
	writeJSON(w, http.StatusOK, work)
}
