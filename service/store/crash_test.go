package store

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// The tests below re-run this test binary as a child process, selected by
// these environment variables; in a normal run the child tests skip.
const (
	envChild = "GPUSCHED_STORE_CHILD" // "crash" or "lock"
	envPath  = "GPUSCHED_STORE_PATH"
)

// startChild runs TestChildProcess in a new process of this test binary.
func startChild(t *testing.T, mode, path string) (*exec.Cmd, *bufio.Scanner, *bytes.Buffer) {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^TestChildProcess$", "-test.count=1")
	cmd.Env = append(os.Environ(), envChild+"="+mode, envPath+"="+path)
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	return cmd, bufio.NewScanner(stdout), &stderr
}

// TestChildProcess is the child's side; it does nothing in a normal run.
func TestChildProcess(t *testing.T) {
	path := os.Getenv(envPath)
	switch os.Getenv(envChild) {
	case "crash":
		childCrash(t, path)
	case "lock":
		_, err := OpenBolt(path, BoltOptions{LockTimeout: 200 * time.Millisecond})
		fmt.Printf("open: %v\n", err)
	default:
		t.Skip("runs only as a child of TestBoltCrash or TestBoltLockedOtherProcess")
	}
}

// childCrash puts keys from 32 goroutines and prints "ack KEY REV" after
// each Put returns, until it is killed (or 30 s pass).
func childCrash(t *testing.T, path string) {
	s, err := OpenBolt(path, BoltOptions{})
	if err != nil {
		fmt.Printf("open: %v\n", err)
		return
	}
	var (
		mu sync.Mutex
		wg sync.WaitGroup
	)
	deadline := time.Now().Add(30 * time.Second)
	for w := range 32 {
		wg.Go(func() {
			for i := 0; time.Now().Before(deadline); i++ {
				key := fmt.Sprintf("k/%02d/%06d", w, i)
				rev, err := s.Put(t.Context(), key, []byte(key))
				if err != nil {
					fmt.Printf("error %v\n", err)
					return
				}
				mu.Lock()
				fmt.Printf("ack %s %d\n", key, rev) // one write(2) per line
				mu.Unlock()
			}
		})
	}
	wg.Wait()
}

// TestBoltCrash kills a writing process with SIGKILL and checks that every
// put it acknowledged is in the reopened store, with its revision.
func TestBoltCrash(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a child process")
	}
	path := filepath.Join(t.TempDir(), "store.db")
	cmd, lines, stderr := startChild(t, "crash", path)
	acked := map[string]int64{}
	var keys []string
	for lines.Scan() {
		f := strings.Fields(lines.Text())
		if len(f) == 3 && f[0] == "ack" {
			rev, err := strconv.ParseInt(f[2], 10, 64)
			if err != nil {
				t.Fatalf("bad ack line %q", lines.Text())
			}
			acked[f[1]] = rev
			keys = append(keys, f[1])
		} else if len(f) > 0 && (f[0] == "error" || f[0] == "open:") {
			t.Fatalf("child: %s", lines.Text())
		}
		if len(acked) == 2000 {
			if err := cmd.Process.Kill(); err != nil { // SIGKILL
				t.Fatal(err)
			}
		}
	}
	err := cmd.Wait()
	if len(acked) < 2000 {
		t.Fatalf("child exited early (%v) after %d acks; stderr:\n%s", err, len(acked), stderr.String())
	}
	t.Logf("child killed (%v) after %d acknowledged puts", err, len(acked))

	s := openBolt(t, path, BoltOptions{})
	defer s.Close()
	checkAcked(t, s, keys)
	maxRev := int64(0)
	for key, rev := range acked {
		kv := mustGet(t, s, key)
		if kv.ModRev != rev || string(kv.Value) != key {
			t.Fatalf("%s = %+v, acknowledged at revision %d", key, kv, rev)
		}
		maxRev = max(maxRev, rev)
	}
	if cur := currentRev(t, s); cur < maxRev {
		t.Fatalf("revision %d after reopen, below acknowledged %d", cur, maxRev)
	}
}

// TestBoltLockedOtherProcess: a second process gets a clear error, not a
// hang, while the store is open.
func TestBoltLockedOtherProcess(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a child process")
	}
	path := filepath.Join(t.TempDir(), "store.db")
	s := openBolt(t, path, BoltOptions{})
	defer s.Close()
	cmd, lines, stderr := startChild(t, "lock", path)
	var out []string
	for lines.Scan() {
		out = append(out, lines.Text())
	}
	if err := cmd.Wait(); err != nil {
		t.Fatalf("child: %v\n%s", err, stderr.String())
	}
	got := strings.Join(out, "\n")
	if !strings.Contains(got, "open: open store "+path+": data directory in use by another process") {
		t.Fatalf("child output:\n%s", got)
	}
}
