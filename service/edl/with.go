package edl

import (
	"context"

	"github.com/gpusched/gpusched/service/store"
)

// putKey is the context key of WithPut.
type putKey struct{}

// WithPut returns a context with which a call that writes a change of a
// job's EDL state (Lease, Report, AcquireMaster, ClaimPServer,
// RenewPServer) writes put() in the same transaction as its change: a
// transport's audit entry, one durable write instead of two. put is called
// under the service's lock, only when the call has a change to write; it
// names a key of its own, which no other change writes, and reports false
// when it has nothing to add.
func WithPut(ctx context.Context, put func() (key string, value []byte, ok bool)) context.Context {
	return context.WithValue(ctx, putKey{}, put)
}

// extraPut adds ctx's put (WithPut) to c, as an op that does not make the
// change a barrier (batcher); it reports whether it added one.
func extraPut(ctx context.Context, c *change) bool {
	put, ok := ctx.Value(putKey{}).(func() (string, []byte, bool))
	if !ok {
		return false
	}
	key, value, ok := put()
	if !ok {
		return false
	}
	c.ops = append(c.ops, store.OpPut(key, value))
	c.keys = append(c.keys, key)
	return true
}
