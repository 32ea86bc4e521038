package model

// changeLog is a bounded log of changes for readers that follow them from
// round to round: entry i of items is change number base+i. A reader keeps
// a mark (the number of changes it has seen) and asks for what came since;
// once the log has been started afresh past the reader's mark, it must
// reload everything, which costs it no more than the entries it skipped.
type changeLog[T any] struct {
	items []T
	base  uint64
}

// add logs v, starting the log afresh first when it holds limit entries
// (clearing them, so that it keeps nothing alive).
func (l *changeLog[T]) add(v T, limit int) {
	if len(l.items) >= limit {
		l.base += uint64(len(l.items))
		clear(l.items)
		l.items = l.items[:0]
	}
	l.items = append(l.items, v)
}

// mark returns the number of changes logged so far.
func (l *changeLog[T]) mark() uint64 { return l.base + uint64(len(l.items)) }

// since returns the changes logged after mark, or false when the log no
// longer reaches back to it (or mark is ahead of it).
func (l *changeLog[T]) since(mark uint64) ([]T, bool) {
	if mark < l.base || mark > l.mark() {
		return nil, false
	}
	return l.items[mark-l.base:], true
}
