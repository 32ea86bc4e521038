package cli_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gpusched/gpusched/internal/testbed/servicetest"
	"github.com/gpusched/gpusched/service/api"
)

// TestTaskCommands drives `gpusched task` against a real server: register
// tasks from a file, lease one, report it done (and again: exit 1 with the
// server's 409), the queue's counts as JSON, the master role, a pserver
// claim, and bad input (exit 2).
func TestTaskCommands(t *testing.T) {
	svc := servicetest.Start(t, nil)
	srv := "--server=" + svc.URL
	if code, out, errs := exe(t, "submit", srv, "--gpus", "1", "--", "train"); code != 0 || strings.TrimSpace(out) != "j1" {
		t.Fatalf("submit: %d %q %q", code, out, errs)
	}
	file := filepath.Join(t.TempDir(), "tasks.txt")
	os.WriteFile(file, []byte("shard-0\nshard-1\n\nshard-2\n"), 0o644)
	steps := []struct {
		args []string
		code int
		want string
	}{
		{[]string{"register", "j1", "--file", file, "--passes", "2"}, 0, "1/2   3     0"},
		{[]string{"register", "j1", "--file", file}, 1, "409"},
		{[]string{"lease", "j1", "--holder", "t0"}, 0, " shard-0"},
		{[]string{"master", "j1", "--take", "--holder", "j1.1.0", "--addr", "n1:9000"}, 0, "j1.1.0  n1:9000  1      true"},
		{[]string{"master", "j1", "--take", "--holder", "j1.1.1"}, 0, "j1.1.0  n1:9000  1      false"},
		{[]string{"claim-pserver", "j1", "--desired", "2", "--holder", "ps-a"}, 0, "0"},
		{[]string{"pservers", "j1"}, 0, "1 held"},
		{[]string{"done", "j1", "0"}, 2, "--lease is required"},
		{[]string{"done", "j1", "x", "--lease", "l"}, 2, "want a task index"},
		{[]string{"lease", "j9", "--holder", "t0"}, 1, `404 no job "j9"`},
		{[]string{"status", "j1x"}, 1, "404"},
	}
	var leased []string
	for _, s := range steps {
		code, out, errs := exe(t, append([]string{"task", s.args[0], srv}, s.args[1:]...)...)
		if code != s.code || !strings.Contains(out+errs, s.want) {
			t.Errorf("task %s: exit %d, out %q err %q; want %d with %q", strings.Join(s.args, " "), code, out, errs, s.code, s.want)
		}
		if s.args[0] == "lease" && code == 0 {
			leased = strings.Fields(out)
		}
	}
	if len(leased) != 3 {
		t.Fatalf("lease printed %q", leased)
	}
	if code, _, errs := exe(t, "task", "done", srv, "j1", leased[0], "--lease", leased[1]); code != 0 {
		t.Fatalf("done: %d %s", code, errs)
	}
	if code, _, errs := exe(t, "task", "done", srv, "j1", leased[0], "--lease", leased[1]); code != 1 || !strings.Contains(errs, "409") {
		t.Fatalf("done twice: %d %s", code, errs)
	}
	code, out, _ := exe(t, "task", "status", srv, "j1", "-o", "json")
	var q api.TaskQueue
	if code != 0 || json.Unmarshal([]byte(out), &q) != nil || q.Done != 1 || q.Todo != 2 || q.Tasks != 3 || q.Passes != 2 {
		t.Fatalf("status: %d %s", code, out)
	}
}
