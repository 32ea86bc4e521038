package shim

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/gpusched/gpusched/service/api"
)

func TestParseProgress(t *testing.T) {
	good := map[string]api.Progress{
		"steps=5\n":                     {Steps: 5},
		"  steps=12   checkpoint=1 ":    {Steps: 12, Checkpoint: true},
		"checkpoint=true steps=3":       {Steps: 3, Checkpoint: true},
		"steps=3 checkpoint=no":         {Steps: 3},
		`{"steps":7,"checkpoint":true}`: {Steps: 7, Checkpoint: true},
		"steps=9223372036854775807":     {Steps: 1<<63 - 1},
	}
	for in, want := range good {
		if got, ok := ParseProgress(in); !ok || got != want {
			t.Errorf("ParseProgress(%q) = %+v, %v; want %+v", in, got, ok, want)
		}
	}
	for _, in := range []string{"", "checkpoint=1", "steps=-1", "steps=x", "steps=1 steps=2",
		"steps=1 checkpoint=maybe", "step=1", "steps=1 extra", `{"steps":1,"x":2}`, `{"checkpoint":true}`} {
		if got, ok := ParseProgress(in); ok {
			t.Errorf("ParseProgress(%q) = %+v, want an error", in, got)
		}
	}
}

// TestProgressWatch reads a progress file written by appending lines,
// in pieces, then rewritten in place (shorter, the same length, longer).
func TestProgressWatch(t *testing.T) {
	path := filepath.Join(t.TempDir(), ProgressFile)
	var w ProgressWatch
	poll := func(want ...api.Progress) {
		t.Helper()
		got, _, err := w.Poll(path)
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != len(want) {
			t.Fatalf("poll: %+v, want %+v", got, want)
		}
		for i := range got {
			if got[i] != want[i] {
				t.Fatalf("poll: %+v, want %+v", got, want)
			}
		}
	}
	write := func(s string) {
		t.Helper()
		if err := os.WriteFile(path, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	appendTo := func(s string) {
		t.Helper()
		f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY|os.O_CREATE, 0o644)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		if _, err := f.WriteString(s); err != nil {
			t.Fatal(err)
		}
	}
	poll() // no file yet
	appendTo("steps=1\nsteps=2 checkpoint=1\nste")
	poll(api.Progress{Steps: 1}, api.Progress{Steps: 2, Checkpoint: true})
	poll() // the partial line waits
	appendTo("ps=3\ngarbage\n\n")
	got, bad, _ := w.Poll(path)
	if len(got) != 1 || got[0].Steps != 3 || bad != 1 {
		t.Fatalf("after completing a line: %+v, %d bad lines", got, bad)
	}
	write("steps=4\n") // shorter: rewritten
	poll(api.Progress{Steps: 4})
	write("steps=5\n") // the same length
	poll(api.Progress{Steps: 5})
	write("steps=50 checkpoint=1\n") // longer
	poll(api.Progress{Steps: 50, Checkpoint: true})
	poll()
	appendTo("steps=51\n")
	poll(api.Progress{Steps: 51})
}
