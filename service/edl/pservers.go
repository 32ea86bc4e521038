package edl

import (
	"context"
	"slices"
	"time"

	"github.com/gpusched/gpusched/service/api"
)

// psRec is one parameter-server slot, stored under "edl/<job>/ps/<index>"
// (seed 001's /ps/<i>). The record stays when its holder goes: the next
// holder of the index finds the checkpoint path there.
type psRec struct {
	Index      int       `json:"index"`
	Holder     string    `json:"holder,omitempty"`
	Addr       string    `json:"addr,omitempty"`
	Checkpoint string    `json:"checkpoint,omitempty"`
	Epoch      int64     `json:"epoch"`
	Expires    time.Time `json:"expires,omitzero"`
}

// live reports whether the slot is held at now.
func (p *psRec) live(now time.Time) bool { return p != nil && p.Holder != "" && now.Before(p.Expires) }

// view returns the slot as the API shows it.
func (p *psRec) view(now time.Time) api.PServer {
	v := api.PServer{Index: p.Index, Checkpoint: p.Checkpoint, Epoch: p.Epoch}
	if p.live(now) {
		v.Holder, v.Addr, v.ExpiresAt = p.Holder, p.Addr, ptrTime(p.Expires)
	}
	return v
}

// PServers lists job's slots by index and counts the held ones (a trainer
// waits until the count reaches the desired one, seed 001).
func (s *Service) PServers(ctx context.Context, job string) (api.PServerList, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	js, err := s.state(ctx, job)
	if err != nil {
		return api.PServerList{}, err
	}
	now := s.clock()
	out := api.PServerList{PServers: []api.PServer{}}
	for _, i := range sortedKeys(js.ps) {
		p := js.ps[i]
		out.PServers = append(out.PServers, p.view(now))
		if p.live(now) {
			out.Live++
		}
	}
	return out, nil
}

// ClaimPServer gives r.Holder the smallest free index below r.Desired
// (seed 001: a pserver claims the smallest free /ps/<i>), with the lease
// r.TTLS; a holder that already holds a slot gets it again. The answer
// carries the slot's checkpoint path, left by its previous holder. No free
// slot is ErrConflict.
func (s *Service) ClaimPServer(ctx context.Context, job string, r api.PServerClaim) (api.PServer, error) {
	s.mu.Lock()
	js, err := s.state(ctx, job)
	if err != nil {
		s.mu.Unlock()
		return api.PServer{}, err
	}
	now := s.clock()
	pick := -1
	for i := range r.Desired {
		p := js.ps[i]
		if p.live(now) && p.Holder == r.Holder {
			pick = i
			break
		}
		if pick < 0 && !p.live(now) {
			pick = i
		}
	}
	if pick < 0 {
		s.mu.Unlock()
		return api.PServer{}, conflict("all %d pserver slots of job %s are held", r.Desired, job)
	}
	return s.holdPServer(job, js, pick, r, now)
}

// RenewPServer renews (or with r.Release frees) slot index for r.Holder,
// recording r.Checkpoint when given. A slot held by another is
// ErrConflict; one that expired is taken again if free.
func (s *Service) RenewPServer(ctx context.Context, job string, index int, r api.PServerClaim) (api.PServer, error) {
	s.mu.Lock()
	js, err := s.state(ctx, job)
	if err != nil {
		s.mu.Unlock()
		return api.PServer{}, err
	}
	now := s.clock()
	p := js.ps[index]
	if index < 0 || index >= api.MaxPServers || p.live(now) && p.Holder != r.Holder {
		s.mu.Unlock()
		return api.PServer{}, conflict("pserver slot %d of job %s is not %s's", index, job, r.Holder)
	}
	return s.holdPServer(job, js, index, r, now)
}

// holdPServer writes slot i held by r.Holder (or freed); s.mu is held and
// released.
func (s *Service) holdPServer(job string, js *jobState, i int, r api.PServerClaim, now time.Time) (api.PServer, error) {
	old := js.ps[i]
	p := &psRec{Index: i}
	if old != nil {
		*p = *old
	}
	if !old.live(now) || old.Holder != r.Holder {
		p.Epoch++
	}
	p.Holder, p.Addr, p.Expires = r.Holder, r.Addr, now.Add(ttl(r.TTLS))
	if r.Checkpoint != "" {
		p.Checkpoint = r.Checkpoint
	}
	if r.Release {
		p.Holder, p.Addr, p.Expires = "", "", time.Time{}
	}
	js.ps[i] = p
	v := p.view(now)
	var c change
	c.put(psKey(job, i), p)
	w := s.queue(job, &c)
	s.mu.Unlock()
	if err := s.wait(job, w); err != nil {
		return api.PServer{}, err
	}
	return v, nil
}

// sortedKeys returns m's keys in order.
func sortedKeys(m map[int]*psRec) []int {
	keys := make([]int, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
