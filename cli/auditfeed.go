package cli

import (
	"io"
	"sync"
)

// auditFeed hands the event log to the auditor, which checks it in its
// own goroutine, without making the simulation wait for the check: Write
// copies each piece into a queue of auditFeedDepth pieces, and the auditor
// takes them in order. (Through an io.Pipe, each Write waited while the
// auditor checked what it had read: about half the check's time was on
// the simulation's path; docs/BENCHMARKS.md, issue 29, eighth session.)
// The first error of the auditor's Write (a violation) fails every Write
// after it that sees it, as a pipe closed with that error did; the
// auditor's own result (audit.Stream.Close) reports it in any case.
type auditFeed struct {
	pieces chan []byte
	free   chan []byte   // used pieces, for Write to fill again
	done   chan struct{} // closed when the auditor has taken every piece
	closed bool          // by Close, which only the writer calls
	mu     sync.Mutex
	err    error // the auditor's first error
}

// auditFeedDepth is how many pieces of the log (each a Write of
// eventlog.Writer, 64 KiB) may wait for the auditor.
const auditFeedDepth = 16

// newAuditFeed starts a goroutine that writes every piece given to the
// feed's Write into check, in order, until Close.
func newAuditFeed(check io.Writer) *auditFeed {
	f := &auditFeed{
		pieces: make(chan []byte, auditFeedDepth),
		free:   make(chan []byte, auditFeedDepth+1),
		done:   make(chan struct{}),
	}
	go f.drain(f.pieces, check)
	return f
}

// drain is the auditor's goroutine: it writes the pieces into check until
// the feed is closed, and after check's first error only takes them.
func (f *auditFeed) drain(pieces <-chan []byte, check io.Writer) {
	defer close(f.done)
	var err error
	for p := range pieces {
		if err == nil {
			if _, err = check.Write(p); err != nil {
				f.mu.Lock()
				f.err = err
				f.mu.Unlock()
			}
		}
		select {
		case f.free <- p[:0]:
		default:
		}
	}
}

// Write queues a copy of p for the auditor. It fails with the auditor's
// error once the auditor has found one (and with io.ErrClosedPipe after
// Close, as a closed pipe's did), and waits only while the queue is full.
// Like Close, it is called by the writer's goroutine only.
func (f *auditFeed) Write(p []byte) (int, error) {
	if f.closed {
		return 0, io.ErrClosedPipe
	}
	f.mu.Lock()
	err := f.err
	f.mu.Unlock()
	if err != nil {
		return 0, err
	}
	var b []byte
	select {
	case b = <-f.free:
	default:
	}
	f.pieces <- append(b, p...)
	return len(p), nil
}

// Close ends the feed and waits for the auditor to take every piece; it
// may be called more than once.
func (f *auditFeed) Close() {
	if !f.closed {
		f.closed = true
		close(f.pieces)
	}
	<-f.done
}
