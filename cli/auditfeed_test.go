package cli

import (
	"bytes"
	"errors"
	"io"
	"testing"
)

// recorder is an auditor that keeps what it is given and fails from the
// write that would take it past failAt bytes (never when failAt is 0).
type recorder struct {
	got    bytes.Buffer
	failAt int
	writes int
}

var errViolation = errors.New("violation")

func (r *recorder) Write(p []byte) (int, error) {
	r.writes++
	if r.failAt > 0 && r.got.Len()+len(p) > r.failAt {
		return 0, errViolation
	}
	return r.got.Write(p)
}

// TestAuditFeed: the auditor gets every piece, in order, whatever the
// pieces' sizes and however many wait (more than the queue's depth); the
// pieces are copies, so the writer may reuse its buffer at once; after
// the auditor's first error it is given nothing more, and a later Write
// fails with that error once the feed has seen it; Close may be repeated,
// and a Write after it fails as a closed pipe's did.
func TestAuditFeed(t *testing.T) {
	tests := []struct {
		name   string
		pieces int
		size   int
		failAt int
	}{
		{name: "nothing", pieces: 0, size: 10},
		{name: "one piece", pieces: 1, size: 100},
		{name: "more than the queue holds", pieces: 10 * auditFeedDepth, size: 1000},
		{name: "large pieces", pieces: 3, size: 1 << 17},
		{name: "a violation", pieces: 50, size: 100, failAt: 1000},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rec := &recorder{failAt: tt.failAt}
			f := newAuditFeed(rec)
			var want bytes.Buffer
			buf := make([]byte, tt.size)
			for i := range tt.pieces {
				for k := range buf {
					buf[k] = byte('a' + (i+k)%26)
				}
				want.Write(buf)
				if _, err := f.Write(buf); err != nil && !errors.Is(err, errViolation) {
					t.Fatalf("write %d: %v", i, err)
				}
			}
			if tt.failAt > 0 {
				// The feed learns of the violation as the auditor gets
				// to it: writes go on succeeding until then.
				err := error(nil)
				for i := 0; err == nil && i < 1<<22; i++ {
					_, err = f.Write(buf)
				}
				if !errors.Is(err, errViolation) {
					t.Errorf("writes after the violation: %v, want it", err)
				}
			}
			f.Close()
			f.Close()
			if _, err := f.Write(buf); !errors.Is(err, io.ErrClosedPipe) {
				t.Errorf("a write after Close: %v, want io.ErrClosedPipe", err)
			}
			if tt.failAt == 0 {
				if !bytes.Equal(rec.got.Bytes(), want.Bytes()) {
					t.Fatalf("the auditor got %d bytes, not the %d written in order", rec.got.Len(), want.Len())
				}
				return
			}
			// 1,000 bytes pass in ten pieces; the eleventh fails, and
			// the auditor is given nothing after it.
			if rec.got.Len() != tt.failAt || rec.writes != tt.failAt/tt.size+1 {
				t.Errorf("the auditor took %d bytes in %d writes, want %d in %d", rec.got.Len(), rec.writes, tt.failAt, tt.failAt/tt.size+1)
			}
		})
	}
}
