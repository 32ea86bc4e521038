package logs

import "sync"

// Signal is a broadcast to log followers: Wait returns a channel closed
// by the next Fire (a log grew or a job changed state). The zero value is
// ready to use; it is safe for concurrent use.
type Signal struct {
	mu sync.Mutex
	ch chan struct{}
}

// Wait returns a channel closed by the next Fire.
func (g *Signal) Wait() <-chan struct{} {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.ch == nil {
		g.ch = make(chan struct{})
	}
	return g.ch
}

// Fire closes the channel of every Wait since the last Fire.
func (g *Signal) Fire() {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.ch != nil {
		close(g.ch)
		g.ch = nil
	}
}
