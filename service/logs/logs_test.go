package logs

import (
	"os"
	"testing"
)

// TestAppend: a chunk resent or overlapping the log appends only what is
// new, one beyond its end is dropped; Files lists the logs by attempt and
// rank; Remove deletes them.
func TestAppend(t *testing.T) {
	l := New(t.TempDir())
	for _, tc := range []struct {
		off  int64
		data string
		want int64
	}{
		{0, "hello ", 6}, {0, "hello ", 6}, {3, "lo world", 11}, {20, "lost", 11}, {11, "!", 12},
	} {
		n, err := l.Append("j1", "j1.1.0", tc.off, []byte(tc.data))
		if err != nil || n != tc.want {
			t.Fatalf("Append(%d, %q) = %d, %v; want %d", tc.off, tc.data, n, err, tc.want)
		}
	}
	for _, id := range []string{"j1.2.0", "j1.1.1", "junk"} {
		if _, err := l.Append("j1", id, 0, []byte("x")); err != nil {
			t.Fatal(err)
		}
	}
	files, err := l.Files("j1")
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, f := range files {
		ids = append(ids, f.Replica)
	}
	if len(ids) != 3 || ids[0] != "j1.1.0" || ids[1] != "j1.1.1" || ids[2] != "j1.2.0" {
		t.Fatalf("Files = %v, want j1.1.0 j1.1.1 j1.2.0", ids)
	}
	if b, err := os.ReadFile(files[0].Path); err != nil || string(b) != "hello world!" {
		t.Errorf("log %q, %v; want %q", b, err, "hello world!")
	}
	if err := l.Remove("j1"); err != nil {
		t.Fatal(err)
	}
	if files, err := l.Files("j1"); err != nil || len(files) != 0 {
		t.Errorf("Files after Remove = %v, %v", files, err)
	}
}

// TestSignal: a Fire closes the channels of the Waits before it, not of
// those after it.
func TestSignal(t *testing.T) {
	var g Signal
	g.Fire() // nobody waits: nothing to close
	a, b := g.Wait(), g.Wait()
	g.Fire()
	for _, ch := range []<-chan struct{}{a, b} {
		select {
		case <-ch:
		default:
			t.Fatal("a Wait before the Fire is not woken")
		}
	}
	select {
	case <-g.Wait():
		t.Fatal("a Wait after the Fire is woken")
	default:
	}
}
