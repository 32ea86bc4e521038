package model

import "testing"

// TestCheckpointNote: the words of the note.
func TestCheckpointNote(t *testing.T) {
	for _, c := range []struct {
		steps int64
		ago   string
		want  string
	}{
		{120, "1m2.3s", "last checkpoint at step 120, 1m2.3s ago"},
		{0, "0s", "last checkpoint at step 0, 0s ago"},
		{7, "300ms", "last checkpoint at step 7, 300ms ago"},
	} {
		if got := CheckpointNote(c.steps, c.ago); got != c.want {
			t.Errorf("CheckpointNote(%d, %q) = %q, want %q", c.steps, c.ago, got, c.want)
		}
	}
}
