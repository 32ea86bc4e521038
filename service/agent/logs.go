package agent

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/gpusched/gpusched/service/api"
	"github.com/gpusched/gpusched/service/shim"
)

// Log shipping limits: one chunk stays well below api.MaxBodyBytes once
// base64-encoded, and one round sends at most a few MiB per replica so that
// one chatty replica does not delay the others.
const (
	logChunkBytes     = 256 << 10
	logChunksPerRound = 16
	// logNotFoundFor is how long log uploads may be answered 404 before
	// the agent concludes that the server has no such replica.
	logNotFoundFor = 30 * time.Second
)

// shipLogs sends every replica's new output, then forgets the replicas that
// are done (acknowledged, all output shipped).
func (a *Agent) shipLogs(ctx context.Context) {
	for _, p := range a.reps.logPending() {
		if ctx.Err() != nil {
			return
		}
		a.shipLog(ctx, p)
	}
	for _, p := range a.reps.forgettable() {
		a.save(p)
		a.log.Debug("replica forgotten", "replica", p.spec.ID)
	}
}

// shipLog sends p's output beyond the server's length in chunks. Failed
// sends are retried on the next round; a refusal ends the shipping of this
// replica's output. The first send of a registration may be an empty
// probe: a restarted server may have less of the output than the agent
// was told, and answers its length. Once p has exited and the server has
// all its output, p's log is done.
func (a *Agent) shipLog(ctx context.Context, p *proc) {
	epoch := a.epoch.Load()
	for range logChunksPerRound {
		sent, exited, synced := a.reps.logState(p, epoch)
		data, err := readChunk(p.dir, sent)
		if err != nil {
			a.log.Warn("read replica log", "replica", p.spec.ID, "err", err)
			return
		}
		if len(data) == 0 && synced {
			if exited { // the output is complete: it was read after the exit
				a.logDone(p)
			}
			return
		}
		ack, err := a.api.logs(ctx, api.LogChunk{Replica: p.spec.ID, Job: p.spec.Job, Offset: sent, Data: data})
		if err != nil {
			if a.refused(p, err, time.Now()) {
				a.log.Warn("server refuses replica output; not sending more", "replica", p.spec.ID, "err", err)
				a.logDone(p)
			}
			return // retried next round
		}
		a.update(p, func(p *proc) { p.logSent, p.logEpoch, p.notFoundSince = ack.Length, epoch, time.Time{} })
		if len(data) > 0 && ack.Length == sent {
			return // no progress; try again next round
		}
	}
}

// refused reports whether a failed log upload means the server will never
// take p's output: a 4xx answer other than 404, or 404s for longer than
// logNotFoundFor. A 404 first counts as the server not knowing the node
// yet (it restarted; the agent is about to register again).
func (a *Agent) refused(p *proc, err error, now time.Time) bool {
	code := httpCode(err)
	if code == 404 {
		since := read(a.reps, p, func(p *proc) time.Time {
			if p.notFoundSince.IsZero() {
				p.notFoundSince = now
			}
			return p.notFoundSince
		})
		return now.Sub(since) > logNotFoundFor
	}
	return code >= 400 && code < 500
}

// logDone marks p's output as all shipped.
func (a *Agent) logDone(p *proc) {
	a.update(p, func(p *proc) { p.logDone = true })
}

// readChunk reads up to logChunkBytes of the log in replica directory dir
// from offset. A replica without a directory or a log has no output.
func readChunk(dir string, offset int64) ([]byte, error) {
	if dir == "" {
		return nil, nil
	}
	path := filepath.Join(dir, shim.LogFile)
	f, err := os.Open(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, fmt.Errorf("stat %s: %w", path, err)
	}
	offset = max(offset, 0)
	if fi.Size() <= offset {
		return nil, nil
	}
	buf := make([]byte, min(fi.Size()-offset, logChunkBytes))
	n, err := f.ReadAt(buf, offset)
	if err != nil && !errors.Is(err, io.EOF) {
		return nil, fmt.Errorf("read %s: %w", path, err)
	}
	return buf[:n], nil
}
