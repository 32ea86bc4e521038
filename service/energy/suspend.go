package energy

import (
	"context"
	"os"
	"os/exec"
	"time"
)

// Idle nodes (docs/ENERGY.md, "Idle nodes"): with Config.SuspendIdle a
// ready node that has held no job for Config.SuspendAfter is reported
// as a candidate for power-down — logged, shown in its view and in
// /metrics — and Config.SuspendHook, if any, runs once for it, e.g. a
// BMC call. Nothing is powered down unless the hook does it; a node that
// the hook turns off stops reporting and is marked down like any other.

// idleState is a node's idleness.
type idleState struct {
	since     time.Time // when it became idle; zero while it runs work
	candidate bool      // reported for this idle period
}

// tickIdle updates every ready node's idleness and reports the new
// candidates.
func (l *Live) tickIdle(w World, now time.Time) {
	for _, name := range w.NodeNames() {
		n := node(w, name)
		st := l.idle[name]
		if st == nil {
			st = &idleState{}
			l.idle[name] = st
		}
		if !n.Ready || w.UsedGPUs(name) > 0 || n.Working {
			*st = idleState{}
			continue
		}
		if st.since.IsZero() {
			st.since = now
		}
		if st.candidate || !l.cfg.SuspendIdle || now.Sub(st.since) < l.cfg.SuspendAfter {
			continue
		}
		st.candidate = true
		l.log.Info("node idle: a candidate for power-down", "node", name, "idle_for", now.Sub(st.since).Round(time.Second))
		if len(l.cfg.SuspendHook) > 0 {
			l.hooks++
			go l.runHook(name, n.Addr, st.since)
		}
	}
}

// runHook runs the suspend hook for node name, logging how it ended.
func (l *Live) runHook(name, addr string, since time.Time) {
	hook := l.cfg.SuspendHook
	ctx, cancel := context.WithTimeout(context.Background(), l.cfg.HookTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, hook[0], hook[1:]...)
	cmd.Env = append(os.Environ(), "GPUSCHED_NODE="+name, "GPUSCHED_NODE_ADDR="+addr,
		"GPUSCHED_IDLE_SINCE="+since.UTC().Format(time.RFC3339))
	out, err := cmd.CombinedOutput()
	if len(out) > 4096 {
		out = out[:4096]
	}
	if err != nil {
		l.log.Warn("suspend hook failed", "node", name, "err", err, "output", string(out))
		return
	}
	l.log.Info("suspend hook ran", "node", name, "output", string(out))
}
