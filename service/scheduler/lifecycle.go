package scheduler

import (
	"fmt"
	"maps"
	"strconv"
	"strings"
	"time"

	"github.com/gpusched/gpusched/core/membership"
	"github.com/gpusched/gpusched/core/model"
	"github.com/gpusched/gpusched/service/api"
	"github.com/gpusched/gpusched/service/ledger"
)

// start records waiting job j as running on gpus, which the caller has
// already taken in the model. Its replicas reach the nodes' work only after
// the batch commits.
func (s *Scheduler) start(b *batch, j *job, gpus []model.GPU, now time.Time) error {
	slots := make([]membership.Slot, len(gpus))
	for i, g := range gpus {
		n := s.tab.Nodes[s.tab.Cluster.Nodes[g.Node].Name]
		slots[i] = membership.Slot{Host: n.Name, GPU: n.GPUs[g.Index].Index}
	}
	m, err := membership.New(j.Rec.ID, slots)
	if err != nil {
		return fmt.Errorf("start %s: %w", j.Rec.ID, err)
	}
	rec := b.edit(j)
	rec.Attempt++
	rec.Generation++
	rec.State, rec.Reason, rec.Stopping = api.Running, "", ""
	rec.StartedAt = ptr(now.UTC())
	rec.Replicas = make([]replicaRec, len(m.Hosts))
	for i, h := range m.Hosts {
		rec.Replicas[i] = replicaRec{ID: api.ReplicaID(rec.ID, rec.Attempt, i), Node: h.Name, GPUs: h.GPUs}
	}
	rec.Alloc = make([]string, 0, len(gpus))
	for _, sl := range m.Slots() {
		rec.Alloc = append(rec.Alloc, sl.String())
	}
	rec.Port = s.port(b, rec)
	rec.ResumeSteps = rec.CheckpointSteps
	reps, err := s.replicas(rec)
	if err != nil {
		return err
	}
	rec.Event(now, "started", "attempt %d on %s%s", rec.Attempt, strings.Join(rec.Alloc, ","), ledger.ResumeNote(rec, now))
	t := model.Time(now.UnixMilli())
	b.then(func() {
		if j.Model.FirstStart < 0 {
			j.Model.FirstStart = t
		}
		j.Model.LastStart, j.Model.Mark, j.Model.Resume = t, t, t
		s.assign(reps)
		s.learner.Started(j, now)
	})
	return nil
}

// port picks the attempt's MASTER_PORT (ledger.PickPort), past the ports
// of other running jobs whose master is the same node.
func (s *Scheduler) port(b *batch, rec *record) int {
	if b.ports == nil {
		b.ports = s.usedPorts()
	}
	master := rec.Replicas[0].Node
	used := b.ports[master]
	if used == nil {
		used = map[int]bool{}
		b.ports[master] = used
	}
	return ledger.PickPort(rec, used, s.cfg.PortBase, s.cfg.PortRange)
}

// usedPorts returns the MASTER_PORTs of the running jobs by master node.
func (s *Scheduler) usedPorts() map[string]map[int]bool {
	ports := map[string]map[int]bool{}
	for _, j := range s.tab.Active {
		if r := &j.Rec; r.State == api.Running && r.Master() != "" {
			m := ports[r.Master()]
			if m == nil {
				m = map[int]bool{}
				ports[r.Master()] = m
			}
			m[r.Port] = true
		}
	}
	return ports
}

// replicas builds the api.Replica of every member replica of the record's
// attempt (not lost with its node, not taken out by a resize): the spec's
// command and env plus the variables of the current membership, whose node
// rank 0 is MASTER_ADDR, and for an elastic job torchrun's elastic
// settings (membership.TorchElastic). The host list holds the member replicas only.
func (s *Scheduler) replicas(rec *record) ([]api.Replica, error) {
	m := rec.Membership()
	if len(m.Hosts) == 0 {
		return nil, fmt.Errorf("job %s has no replicas", rec.ID)
	}
	hostFile := m.HostList()
	master := rec.Master()
	if n := s.tab.Nodes[master]; n != nil {
		master = n.MasterAddr()
	}
	out := make([]api.Replica, 0, len(rec.Replicas))
	for _, rr := range rec.Replicas {
		if !rr.Member() {
			continue
		}
		env, err := m.NodeEnv(rr.Node, rec.Port)
		if err != nil {
			return nil, fmt.Errorf("job %s: replica %s: %w", rec.ID, rr.ID, err)
		}
		full := maps.Clone(rec.Env)
		if full == nil {
			full = map[string]string{}
		}
		maps.Copy(full, env)
		full["MASTER_ADDR"], full["PET_MASTER_ADDR"] = master, master
		for k, v := range membership.TorchElastic(rec.ID, rec.Port, rec.MinGPUs, rec.MaxGPUs, master, env["NODE_RANK"] == "0") {
			if _, set := rec.Env[k]; !set {
				full[k] = v
			}
		}
		full["GPUSCHED_RESTART_COUNT"] = strconv.Itoa(rec.Attempt - 1)
		full["GPUSCHED_CHECKPOINT_STEPS"] = strconv.FormatInt(rec.ResumeSteps, 10)
		full["GPUSCHED_REPLICA_ID"] = rr.ID
		if s.cfg.JobToken != nil {
			tok, err := s.cfg.JobToken(rec.ID)
			if err != nil {
				return nil, fmt.Errorf("job %s: token: %w", rec.ID, err)
			}
			full["GPUSCHED_TOKEN"] = tok
		}
		out = append(out, api.Replica{ID: rr.ID, Job: rec.ID, Command: rec.Command, Env: full, Workdir: rec.Workdir,
			GPUs: rr.GPUs, HostFile: hostFile, GracePeriodS: rec.GracePeriodS, User: rec.User,
			Limits: s.replicaLimits(rec, len(rr.GPUs))})
	}
	return out, nil
}

// assign puts replicas into their nodes' work.
func (s *Scheduler) assign(reps []api.Replica) {
	touched := map[*node]bool{}
	for _, r := range reps {
		_, _, rank, _ := api.ParseReplicaID(r.ID)
		j := s.tab.Active[r.Job]
		n := s.tab.Nodes[j.Rec.Replicas[rank].Node]
		if n == nil {
			continue
		}
		n.Work[r.ID] = r
		delete(n.Removed, r.ID)
		touched[n] = true
	}
	for n := range touched {
		s.bump(n)
	}
}

// unassign takes a stopping job's replicas out of their nodes' work; they
// count as running until their agents say otherwise.
func (s *Scheduler) unassign(j *job) { s.takeOut(j, func(*replicaRec) bool { return true }) }

// drain takes the replicas of running job j that a resize took out of the
// job (Left) and that still run out of their nodes' work: their agents
// stop them, and they are gone once the agents no longer report them.
func (s *Scheduler) drain(j *job) { s.takeOut(j, func(rr *replicaRec) bool { return rr.Left }) }

// takeOut takes the replicas of j that are not gone and that which selects
// out of their nodes' work and awaits them as removed.
func (s *Scheduler) takeOut(j *job, which func(*replicaRec) bool) {
	touched := map[*node]bool{}
	for i := range j.Rec.Replicas {
		rr := &j.Rec.Replicas[i]
		if !which(rr) {
			continue
		}
		if n := s.tab.Nodes[rr.Node]; n != nil && !rr.Done {
			if _, ok := n.Work[rr.ID]; ok {
				delete(n.Work, rr.ID)
				touched[n] = true
			}
		}
	}
	for n := range touched {
		s.bump(n)
	}
	for i := range j.Rec.Replicas {
		rr := &j.Rec.Replicas[i]
		if !which(rr) {
			continue
		}
		if n := s.tab.Nodes[rr.Node]; n != nil && !rr.Done {
			if _, ok := n.Removed[rr.ID]; !ok {
				n.Removed[rr.ID] = removal{Job: j.Rec.ID, At: n.Version}
			}
		}
	}
}

// forget removes a replica that is gone from its node's lists.
func (s *Scheduler) forget(nodeName, id string) {
	n := s.tab.Nodes[nodeName]
	if n == nil {
		return
	}
	delete(n.Removed, id)
	if _, ok := n.Work[id]; ok {
		delete(n.Work, id)
		s.bump(n)
	}
}

// addNode adds a node with a fresh work version: versions come from one
// scheduler-wide counter that starts at the clock's Unix microseconds, so they
// exceed those of a previous run and an agent's first long-poll (after=0)
// is answered at once.
func (s *Scheduler) addNode(n *node) *node {
	s.tab.Nodes[n.Name] = n
	s.bump(n)
	return n
}

// bump gives n's work a new version and wakes its long-polls.
func (s *Scheduler) bump(n *node) {
	s.version++
	n.Bump(s.version)
}
