package peer

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"time"
)

// Gavel runs Gavel's simulator through the peer's runner script.
type Gavel struct {
	// Script is the runner (../shared/peers/gavel/gavel).
	Script string
	// Cache is the directory of cached answers; "" caches nothing.
	Cache string
	// Timeout bounds one run; 0 means none.
	Timeout time.Duration
}

// Result is what one Gavel run reports.
type Result struct {
	// AvgJCT is Gavel's "Average job completion time" in seconds.
	AvgJCT float64 `json:"avg_jct_s"`
	// Utilization is Gavel's "Cluster utilization".
	Utilization float64 `json:"cluster_util"`
	// Command is the command that produced it.
	Command string `json:"command"`
	// Cached says that the answer came from the cache.
	Cached bool `json:"-"`
}

// Find returns the Gavel runner under the shared folder, or "" when there
// is none.
func Find(shared string) string {
	p := filepath.Join(shared, "peers", "gavel", "gavel")
	if st, err := os.Stat(p); err == nil && !st.IsDir() {
		return p
	}
	return ""
}

var clusterRE = regexp.MustCompile(`^[0-9]+:[0-9]+:[0-9]+$`)

// GPUs converts Gavel's cluster (V100:P100:K80 GPU counts, "8:8:8") to
// gpusched's --gpus ("v100=8,p100=8,k80=8").
func GPUs(cluster string) (string, error) {
	if !clusterRE.MatchString(cluster) {
		return "", fmt.Errorf("gavel cluster %q: want V100:P100:K80 GPU counts such as 8:8:8", cluster)
	}
	n := strings.Split(cluster, ":")
	return fmt.Sprintf("v100=%s,p100=%s,k80=%s", n[0], n[1], n[2]), nil
}

// Run runs policy on the Gavel-format trace at path on cluster
// (V100:P100:K80), or returns the cached answer.
func (g *Gavel) Run(ctx context.Context, path, policy, cluster string) (Result, error) {
	if _, err := GPUs(cluster); err != nil {
		return Result{}, err
	}
	if policy == "" || strings.ContainsAny(policy, " /") {
		return Result{}, fmt.Errorf("gavel policy %q: want one of Gavel's policy names", policy)
	}
	trace, err := os.ReadFile(path)
	if err != nil {
		return Result{}, fmt.Errorf("gavel: read trace: %w", err)
	}
	key := g.key(trace, policy, cluster)
	if r, ok := g.cached(key); ok {
		return r, nil
	}
	r, err := g.run(ctx, path, policy, cluster)
	if err != nil {
		return Result{}, err
	}
	return r, g.store(key, r)
}

// key identifies a run: the trace's content, the policy, the cluster and
// the runner script's content.
func (g *Gavel) key(trace []byte, policy, cluster string) string {
	h := sha256.New()
	h.Write(trace)
	runner, _ := os.ReadFile(g.Script)
	h.Write(runner)
	fmt.Fprintf(h, "\x00%s\x00%s", policy, cluster)
	return hex.EncodeToString(h.Sum(nil))[:24] + "-" + policy + "-" + strings.ReplaceAll(cluster, ":", "-")
}

func (g *Gavel) cached(key string) (Result, bool) {
	if g.Cache == "" {
		return Result{}, false
	}
	data, err := os.ReadFile(filepath.Join(g.Cache, key+".json"))
	if err != nil {
		return Result{}, false
	}
	var r Result
	if json.Unmarshal(data, &r) != nil || r.AvgJCT <= 0 {
		return Result{}, false
	}
	r.Cached = true
	return r, true
}

// store writes r to the cache (a temporary file renamed into place).
func (g *Gavel) store(key string, r Result) error {
	if g.Cache == "" {
		return nil
	}
	if err := os.MkdirAll(g.Cache, 0o755); err != nil {
		return fmt.Errorf("gavel cache: %w", err)
	}
	data, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return err
	}
	tmp := filepath.Join(g.Cache, "."+key+".tmp")
	if err := os.WriteFile(tmp, data, 0o644); err != nil {
		return fmt.Errorf("gavel cache: %w", err)
	}
	return os.Rename(tmp, filepath.Join(g.Cache, key+".json"))
}

// run starts the runner and parses its output.
func (g *Gavel) run(ctx context.Context, path, policy, cluster string) (Result, error) {
	if g.Timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, g.Timeout)
		defer cancel()
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return Result{}, err
	}
	cmd := exec.CommandContext(ctx, g.Script, abs, policy, cluster)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err = cmd.Run()
	if ctx.Err() != nil {
		return Result{}, fmt.Errorf("gavel %s on %s: %w", policy, path, ctx.Err())
	}
	if err != nil {
		return Result{}, fmt.Errorf("gavel %s on %s: %w: %s", policy, path, err, tail(out.String()))
	}
	r, err := Parse(out.String())
	if err != nil {
		return Result{}, fmt.Errorf("gavel %s on %s: %w", policy, path, err)
	}
	r.Command = strings.Join([]string{g.Script, path, policy, cluster}, " ")
	return r, nil
}

var (
	jctRE  = regexp.MustCompile(`(?m)^Average job completion time: ([0-9.eE+-]+) seconds`)
	utilRE = regexp.MustCompile(`(?m)^Cluster utilization: ([0-9.eE+-]+)`)
)

// Parse reads the average JCT and utilization from Gavel's output.
func Parse(out string) (Result, error) {
	m := jctRE.FindStringSubmatch(out)
	if m == nil {
		return Result{}, errors.New("no \"Average job completion time\" line in Gavel's output")
	}
	var r Result
	var err error
	if r.AvgJCT, err = strconv.ParseFloat(m[1], 64); err != nil || r.AvgJCT <= 0 {
		return Result{}, fmt.Errorf("average job completion time %q is not a positive number", m[1])
	}
	if m := utilRE.FindStringSubmatch(out); m != nil {
		r.Utilization, _ = strconv.ParseFloat(m[1], 64)
	}
	return r, nil
}

// tail returns the last lines of a run's output for an error message.
func tail(s string) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	if len(lines) > 5 {
		lines = lines[len(lines)-5:]
	}
	return strings.Join(lines, " | ")
}
