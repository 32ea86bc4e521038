package store

import "fmt"

// table is the key space as the write path sees it: bbolt's bucket inside a
// write transaction, or Mem's map. Sharing applyTxn between the two keeps
// their semantics identical.
type table interface {
	get(key string) (record, bool, error)
	put(key string, r record) error
	del(key string) error
}

// applyTxn checks ops' compares against t and, if all hold, applies the
// puts and deletes at revision rev. It returns the resulting events (none if
// nothing changed, in which case the caller must not advance the revision).
// A failed compare returns an error wrapping ErrCompareFailed and writes
// nothing; ops must have been checked by prepareOps.
func applyTxn(t table, ops []Op, rev int64) ([]Event, error) {
	for _, op := range ops {
		if op.typ != opCompare {
			continue
		}
		rec, ok, err := t.get(op.key)
		if err != nil {
			return nil, fmt.Errorf("compare %q: %w", op.key, err)
		}
		have := int64(0)
		if ok {
			have = rec.modRev
		}
		if have != op.rev {
			return nil, compareError(op, have)
		}
	}
	var events []Event
	for _, op := range ops {
		ev, changed, err := applyWrite(t, op, rev)
		if err != nil {
			return nil, err
		}
		if changed {
			events = append(events, ev)
		}
	}
	return events, nil
}

// applyWrite applies one put or delete; compares are skipped.
func applyWrite(t table, op Op, rev int64) (Event, bool, error) {
	switch op.typ {
	case opPut:
		old, ok, err := t.get(op.key)
		if err != nil {
			return Event{}, false, fmt.Errorf("put %q: %w", op.key, err)
		}
		rec := record{createRev: rev, modRev: rev, value: op.value}
		if ok {
			rec.createRev = old.createRev
		}
		if err := t.put(op.key, rec); err != nil {
			return Event{}, false, fmt.Errorf("put %q: %w", op.key, err)
		}
		kv := KV{Key: op.key, Value: op.value, CreateRev: rec.createRev, ModRev: rev}
		return Event{Type: EventPut, KV: kv}, true, nil
	case opDelete:
		_, ok, err := t.get(op.key)
		if err != nil || !ok {
			return Event{}, false, wrapIf(err, "delete %q", op.key)
		}
		if err := t.del(op.key); err != nil {
			return Event{}, false, fmt.Errorf("delete %q: %w", op.key, err)
		}
		return Event{Type: EventDelete, KV: KV{Key: op.key, ModRev: rev}}, true, nil
	}
	return Event{}, false, nil
}

// wrapIf wraps a non-nil err with a formatted context; nil stays nil.
func wrapIf(err error, format string, args ...any) error {
	if err == nil {
		return nil
	}
	return fmt.Errorf(format+": %w", append(args, err)...)
}
