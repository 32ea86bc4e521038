// Command ckpt is the training stand-in of the end-to-end tests: it "trains"
// for --steps steps of --step-ms each, checkpoints (a file with its step
// count) every --ckpt-every steps and on SIGTERM, reports progress and
// checkpoints to gpusched (through $GPUSCHED_PROGRESS_FILE, or over HTTP
// with --server), and on a restart resumes from its checkpoint. It writes,
// under --state, per node rank R:
//
//	ckpt.R   the checkpoint: the steps done, written atomically
//	done.R   the total steps once it finished
//	log      one line per event: start, term, done (appended by every rank
//	         and attempt), with the attempt (GPUSCHED_RESTART_COUNT)
//
// With --ignore-term it ignores SIGTERM (and logs it), so only SIGKILL ends
// it.
package main

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"net/http"
	"os"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// options are the command's flags.
type options struct {
	state      string
	steps      int64
	stepMS     int
	ckptEvery  int64
	ckptUntil  int64
	server     string
	ignoreTerm bool
}

// trainer is one run of the program.
type trainer struct {
	o       options
	rank    string
	attempt string
	step    int64
}

func main() {
	var o options
	flag.StringVar(&o.state, "state", "", "directory of the checkpoint and log files (required)")
	flag.Int64Var(&o.steps, "steps", 100, "total steps")
	flag.IntVar(&o.stepMS, "step-ms", 50, "duration of one step in milliseconds")
	flag.Int64Var(&o.ckptEvery, "ckpt-every", 0, "checkpoint every this many steps (0: only on SIGTERM)")
	flag.Int64Var(&o.ckptUntil, "ckpt-until", 0, "no periodic checkpoint after this step (0: no limit)")
	flag.StringVar(&o.server, "server", "", "report progress to this gpusched server over HTTP instead of the progress file")
	flag.BoolVar(&o.ignoreTerm, "ignore-term", false, "ignore SIGTERM")
	flag.Parse()
	if o.state == "" {
		fmt.Fprintln(os.Stderr, "ckpt: --state is required")
		os.Exit(2)
	}
	t := &trainer{o: o, rank: env("NODE_RANK", "0"), attempt: env("GPUSCHED_RESTART_COUNT", "0")}
	if err := t.run(); err != nil {
		fmt.Fprintln(os.Stderr, "ckpt:", err)
		os.Exit(1)
	}
}

// run trains from the checkpoint to the end, or until SIGTERM.
func (t *trainer) run() error {
	term := make(chan os.Signal, 1)
	signal.Notify(term, syscall.SIGTERM)
	from, err := t.readCheckpoint()
	if err != nil {
		return err
	}
	t.step = from
	t.logf("start attempt=%s rank=%s from=%d env=%s pid=%d", t.attempt, t.rank, from,
		os.Getenv("GPUSCHED_CHECKPOINT_STEPS"), os.Getpid())
	fmt.Printf("attempt %s resumes at step %d\n", t.attempt, from)
	tick := time.NewTicker(time.Duration(t.o.stepMS) * time.Millisecond)
	defer tick.Stop()
	for t.step < t.o.steps {
		select {
		case <-term:
			t.logf("term attempt=%s rank=%s at=%d step=%d", t.attempt, t.rank, time.Now().UnixNano(), t.step)
			if t.o.ignoreTerm {
				continue
			}
			return t.checkpoint()
		case <-tick.C:
		}
		t.step++
		every, until := t.o.ckptEvery, t.o.ckptUntil
		if every > 0 && t.step%every == 0 && (until == 0 || t.step <= until) {
			if err := t.checkpoint(); err != nil {
				return err
			}
			continue
		}
		if err := t.report(false); err != nil {
			return err
		}
	}
	if err := os.WriteFile(t.file("done"), []byte(strconv.FormatInt(t.step, 10)), 0o644); err != nil {
		return err
	}
	t.logf("done attempt=%s rank=%s steps=%d", t.attempt, t.rank, t.step)
	return t.checkpoint()
}

// readCheckpoint returns the steps of the checkpoint, 0 without one.
func (t *trainer) readCheckpoint() (int64, error) {
	b, err := os.ReadFile(t.file("ckpt"))
	if os.IsNotExist(err) {
		return 0, nil
	}
	if err != nil {
		return 0, err
	}
	return strconv.ParseInt(strings.TrimSpace(string(b)), 10, 64)
}

// checkpoint writes the checkpoint atomically and reports it.
func (t *trainer) checkpoint() error {
	tmp := t.file("ckpt") + ".tmp"
	if err := os.WriteFile(tmp, []byte(strconv.FormatInt(t.step, 10)), 0o644); err != nil {
		return err
	}
	if err := os.Rename(tmp, t.file("ckpt")); err != nil {
		return err
	}
	return t.report(true)
}

// report tells gpusched the steps done (and that a checkpoint was just
// written).
func (t *trainer) report(ckpt bool) error {
	if t.o.server != "" {
		return t.post(ckpt)
	}
	path := os.Getenv("GPUSCHED_PROGRESS_FILE")
	if path == "" {
		return nil
	}
	line := fmt.Sprintf("steps=%d", t.step)
	if ckpt {
		line += " checkpoint=1"
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	if err != nil {
		return err
	}
	_, err = fmt.Fprintln(f, line)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

// post sends POST /v1/jobs/{id}/progress.
func (t *trainer) post(ckpt bool) error {
	body, _ := json.Marshal(map[string]any{"steps": t.step, "checkpoint": ckpt})
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	url := t.o.server + "/v1/jobs/" + os.Getenv("GPUSCHED_JOB_ID") + "/progress"
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		return err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("POST %s: %s", url, resp.Status)
	}
	return nil
}

// file returns the path of this rank's file called name.
func (t *trainer) file(name string) string {
	return filepath.Join(t.o.state, name+"."+t.rank)
}

// logf appends one line to the shared log.
func (t *trainer) logf(format string, a ...any) {
	f, err := os.OpenFile(filepath.Join(t.o.state, "log"), os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	if err != nil {
		fmt.Fprintln(os.Stderr, "ckpt: log:", err)
		return
	}
	defer f.Close()
	fmt.Fprintf(f, format+"\n", a...)
}

func env(k, def string) string {
	if v := os.Getenv(k); v != "" {
		return v
	}
	return def
}
