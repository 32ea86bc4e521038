package store

import (
	"context"
	"errors"
	"fmt"

	"go.etcd.io/etcd/api/v3/mvccpb"
	"go.etcd.io/etcd/api/v3/v3rpc/rpctypes"
	clientv3 "go.etcd.io/etcd/client/v3"
)

// Watch streams changes under prefix after rev (etcd's Watch with
// WithRev(rev+1)); see Store.Watch. rev 0 starts at the current revision,
// read before the watch is set up, so that a write acknowledged after Watch
// returns is never missed. A revision etcd has compacted gives
// ErrCompacted; a compaction that overtakes a running watch, or a watcher
// that falls more than WatchBuffer events behind, closes the channel.
func (e *Etcd) Watch(ctx context.Context, prefix string, rev int64) (<-chan Event, error) {
	if rev < 0 {
		return nil, fmt.Errorf("watch %q from %d: %w: negative revision", prefix, rev, ErrInvalid)
	}
	if err := e.begin(ctx); err != nil {
		return nil, fmt.Errorf("watch %q: %w", prefix, err)
	}
	start, err := e.watchStart(ctx, rev)
	if err != nil {
		return nil, fmt.Errorf("watch %q from revision %d: %w", prefix, rev, err)
	}
	buffer := e.opts.WatchBuffer
	if buffer <= 0 {
		buffer = DefaultWatchBuffer
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.closed {
		return nil, fmt.Errorf("watch %q: %w", prefix, ErrClosed)
	}
	wctx, cancel := context.WithCancel(clientv3.WithRequireLeader(ctx))
	stop := context.AfterFunc(e.ctx, cancel)
	wch := e.cli.Watch(wctx, e.Key(prefix), clientv3.WithPrefix(), clientv3.WithRev(start))
	out := make(chan Event, buffer)
	e.wg.Add(1)
	go func() {
		defer e.wg.Done()
		defer stop()
		defer cancel()
		defer close(out)
		e.forward(wch, out)
	}()
	return out, nil
}

// watchStart returns the first revision to watch from: rev+1, or the
// current revision + 1 for rev 0. It fails with ErrCompacted when etcd no
// longer holds revision rev+1 (a revision in the future is fine).
func (e *Etcd) watchStart(ctx context.Context, rev int64) (int64, error) {
	probe := e.prefix + etcdSchemaKey
	if rev == 0 {
		resp, err := e.cli.Get(ctx, probe, clientv3.WithCountOnly())
		if err != nil {
			return 0, etcdErr(err)
		}
		return resp.Header.Revision + 1, nil
	}
	_, err := e.cli.Get(ctx, probe, clientv3.WithRev(rev+1), clientv3.WithCountOnly())
	switch {
	case err == nil, errors.Is(err, rpctypes.ErrFutureRev):
		return rev + 1, nil
	default:
		return 0, etcdErr(err)
	}
}

// forward turns etcd's watch responses into events until the watch ends,
// the channel would block (a slow watcher is dropped), or etcd reports a
// compaction or cancellation.
func (e *Etcd) forward(wch clientv3.WatchChan, out chan<- Event) {
	for resp := range wch {
		if resp.Canceled || resp.CompactRevision != 0 || resp.Err() != nil {
			if resp.CompactRevision != 0 {
				e.log.Warn("watch overtaken by a compaction; dropped", "compact_revision", resp.CompactRevision)
			}
			return
		}
		for _, ev := range resp.Events {
			select {
			case out <- e.event(ev):
			default:
				e.log.Warn("watcher fell behind; dropped", "buffer", cap(out))
				return
			}
		}
	}
}

// event converts one etcd event.
func (e *Etcd) event(ev *clientv3.Event) Event {
	kv := KV{Key: e.StoreKey(string(ev.Kv.Key)), ModRev: ev.Kv.ModRevision}
	if ev.Type == mvccpb.DELETE {
		return Event{Type: EventDelete, KV: kv}
	}
	kv.Value = append([]byte{}, ev.Kv.Value...)
	kv.CreateRev = ev.Kv.CreateRevision
	return Event{Type: EventPut, KV: kv}
}
