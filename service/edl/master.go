package edl

import (
	"context"
	"time"

	"github.com/gpusched/gpusched/service/api"
)

// masterRec is a job's master role, stored under "edl/<job>/master".
type masterRec struct {
	Holder  string    `json:"holder"`
	Addr    string    `json:"addr,omitempty"`
	Epoch   int64     `json:"epoch"`
	Expires time.Time `json:"expires"`
}

// live reports whether the role is held at now.
func (m *masterRec) live(now time.Time) bool {
	return m != nil && m.Holder != "" && now.Before(m.Expires)
}

// view returns the role as the API shows it.
func (m *masterRec) view(now time.Time, granted bool) api.Master {
	if !m.live(now) {
		out := api.Master{Granted: granted}
		if m != nil {
			out.Epoch = m.Epoch
		}
		return out
	}
	return api.Master{Granted: granted, Holder: m.Holder, Addr: m.Addr, Epoch: m.Epoch, ExpiresAt: ptrTime(m.Expires)}
}

// Master returns job's master role (seed 001: one master at a time, its
// address at /master/addr).
func (s *Service) Master(ctx context.Context, job string) (api.Master, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	js, err := s.state(ctx, job)
	if err != nil {
		return api.Master{}, err
	}
	return js.master.view(s.clock(), false), nil
}

// AcquireMaster grants the master role of job to r.Holder when it is free,
// expired, or already r.Holder's (a renewal), for r.TTLS; with r.Release
// the holder gives it up. A role held by another live holder is not
// granted (Granted false, the current holder shown). The grant is durable
// before it is answered.
func (s *Service) AcquireMaster(ctx context.Context, job string, r api.MasterRequest) (api.Master, error) {
	s.mu.Lock()
	js, err := s.state(ctx, job)
	if err != nil {
		s.mu.Unlock()
		return api.Master{}, err
	}
	now := s.clock()
	cur := js.master
	mine := cur != nil && cur.Holder == r.Holder && cur.live(now)
	if !mine && (cur.live(now) || r.Release) {
		v := cur.view(now, false)
		s.mu.Unlock()
		return v, nil
	}
	next := &masterRec{Holder: r.Holder, Addr: r.Addr, Expires: now.Add(ttl(r.TTLS))}
	if cur != nil {
		next.Epoch = cur.Epoch
	}
	if !mine {
		next.Epoch++ // a new master
	}
	if r.Release {
		next = &masterRec{Epoch: next.Epoch}
	}
	js.master = next
	v := next.view(now, !r.Release)
	var c change
	c.put(masterKey(job), next)
	q := s.queue(job, &c)
	s.mu.Unlock()
	if err := s.wait(job, q); err != nil {
		return api.Master{}, err
	}
	return v, nil
}
