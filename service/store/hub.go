package store

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"sync"
)

// Watch defaults shared by every implementation, so that Mem and Bolt
// behave alike.
const (
	// DefaultWatchBuffer is the default number of events a watcher may fall
	// behind before it is dropped.
	DefaultWatchBuffer = 1024
	// DefaultWatchHistory is the default number of recent events kept in
	// memory for watches that start in the past.
	DefaultWatchHistory = 4096
)

// hub fans committed events out to watchers and keeps a bounded in-memory
// history, so that a watch may start a little in the past (typically at the
// revision a List returned, with writes committed in between).
//
// The writer of a store calls publish in revision order, one call per
// commit; hub does not reorder.
type hub struct {
	mu       sync.Mutex
	rev      int64   // revision of the last published event
	base     int64   // history holds every event with a revision > base
	history  []Event // in revision order
	keep     int     // history length to keep (0: none)
	buffer   int     // per-watcher channel capacity
	watchers map[*watcher]struct{}
	closed   bool
}

// watcher is one Watch call.
type watcher struct {
	prefix string
	after  int64 // deliver only events with ModRev > after
	ch     chan Event
	stop   func() bool // stops the context.AfterFunc that removes it
}

// newHub returns a hub whose current revision is rev. history < 0 keeps no
// history; 0 means DefaultWatchHistory. buffer <= 0 means
// DefaultWatchBuffer.
func newHub(rev int64, history, buffer int) *hub {
	if history == 0 {
		history = DefaultWatchHistory
	}
	if buffer <= 0 {
		buffer = DefaultWatchBuffer
	}
	return &hub{
		rev:      rev,
		base:     rev,
		keep:     max(history, 0),
		buffer:   buffer,
		watchers: make(map[*watcher]struct{}),
	}
}

// publish records the events of one commit, which brought the store to
// revision rev, and hands them to the watchers. A watcher whose buffer is
// full is dropped (its channel closed); publish never blocks.
func (h *hub) publish(rev int64, events []Event) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.closed {
		return
	}
	h.rev = max(h.rev, rev)
	for _, ev := range events {
		for w := range h.watchers {
			if ev.KV.ModRev <= w.after || !strings.HasPrefix(ev.KV.Key, w.prefix) {
				continue
			}
			select {
			case w.ch <- ev:
			default:
				h.drop(w)
			}
		}
	}
	h.remember(events)
}

// remember appends events to the history and trims it, amortized: the
// history is cut back to keep entries once it holds twice as many.
func (h *hub) remember(events []Event) {
	if h.keep == 0 {
		h.base = h.rev
		return
	}
	h.history = append(h.history, events...)
	if len(h.history) <= 2*h.keep {
		return
	}
	cut := len(h.history) - h.keep
	h.base = h.history[cut-1].KV.ModRev
	h.history = append(h.history[:0:0], h.history[cut:]...)
}

// watch registers a watcher for events under prefix with revisions > rev.
func (h *hub) watch(ctx context.Context, prefix string, rev int64) (<-chan Event, error) {
	if rev < 0 {
		return nil, fmt.Errorf("watch %q from %d: %w: negative revision", prefix, rev, ErrInvalid)
	}
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("watch %q: %w", prefix, err)
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.closed {
		return nil, fmt.Errorf("watch %q: %w", prefix, ErrClosed)
	}
	if rev == 0 {
		rev = h.rev
	}
	if rev < h.base {
		return nil, fmt.Errorf("watch %q from revision %d: %w (oldest available: %d, current: %d)",
			prefix, rev, ErrCompacted, h.base, h.rev)
	}
	replay := h.since(prefix, rev)
	w := &watcher{prefix: prefix, after: rev, ch: make(chan Event, h.buffer+len(replay))}
	for _, ev := range replay {
		w.ch <- ev
	}
	h.watchers[w] = struct{}{}
	w.stop = context.AfterFunc(ctx, func() { h.remove(w) })
	return w.ch, nil
}

// since returns the remembered events under prefix with revisions > rev.
func (h *hub) since(prefix string, rev int64) []Event {
	i := sort.Search(len(h.history), func(i int) bool { return h.history[i].KV.ModRev > rev })
	var out []Event
	for _, ev := range h.history[i:] {
		if strings.HasPrefix(ev.KV.Key, prefix) {
			out = append(out, ev)
		}
	}
	return out
}

// remove unregisters w (its context ended) and closes its channel.
func (h *hub) remove(w *watcher) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if _, ok := h.watchers[w]; ok {
		delete(h.watchers, w)
		close(w.ch)
	}
}

// drop unregisters a watcher that fell behind; h.mu is held.
func (h *hub) drop(w *watcher) {
	delete(h.watchers, w)
	close(w.ch)
	w.stop()
}

// close closes every watcher's channel; later watches fail with ErrClosed.
func (h *hub) close() {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.closed = true
	for w := range h.watchers {
		h.drop(w)
	}
}
