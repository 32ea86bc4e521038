package e2e

import (
	"bufio"
	"encoding/json"
	"flag"
	"fmt"
	"math/rand/v2"
	"net/http"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gpusched/gpusched/internal/testbed/etcdtest"
	"github.com/gpusched/gpusched/service/api"
)

// haKills is how many times TestHAFailover kills the leader: 3 in `make
// test`, 20 with `make test-ha` (go test ./e2e -run TestHAFailover
// -ha.kills 20).
var haKills = flag.Int("ha.kills", 3, "TestHAFailover: how many times to kill -9 the leader")

// haCluster is 3 gpusched servers on a 3-member etcd, with 2 agents.
type haCluster struct {
	t       *testing.T
	etcd    *etcdtest.Cluster
	addrs   []string // server URLs
	args    [][]string
	servers []*proc
	agents  []*proc
	list    string // the comma-separated server list
}

// startHACluster starts the etcd members, the servers and the agents.
func startHACluster(t *testing.T) *haCluster {
	c := &haCluster{t: t, etcd: etcdtest.Start(t, 3)}
	data := t.TempDir()
	for i := range 3 {
		addr := freeAddr(t)
		c.addrs = append(c.addrs, "http://"+addr)
		c.args = append(c.args, []string{"server", "--listen", addr, "--data", filepath.Join(data, fmt.Sprintf("s%d", i)),
			"--store", c.etcd.URL(), "--leader-ttl", "2s", "--heartbeat-timeout", "4s", "--auth=false"})
		c.servers = append(c.servers, start(t, fmt.Sprintf("server %d", i), c.args[i]...))
	}
	c.list = strings.Join(c.addrs, ",")
	for _, u := range c.addrs {
		waitHealthy(t, u)
	}
	for i := range 2 {
		n := fmt.Sprintf("n%d", i)
		c.agents = append(c.agents, start(t, "agent "+n, "agent", "--server", c.list, "--name", n,
			"--gpus", "v100=2", "--data", filepath.Join(data, n), "--stop-replicas-on-exit"))
	}
	return c
}

// leader returns the index of the server every live server names as the
// leader, or -1 while they do not agree.
func (c *haCluster) leader(skip int) int {
	lead := -1
	for i, u := range c.addrs {
		if i == skip {
			continue
		}
		var l api.Leader
		if err := getJSON(u+"/v1/leader", &l); err != nil || l.URL == "" {
			return -1
		}
		j := slices.Index(c.addrs, l.URL)
		if j < 0 || lead >= 0 && j != lead || j == skip {
			return -1
		}
		lead = j
	}
	return lead
}

// waitLeader waits until the live servers agree on a leader.
func (c *haCluster) waitLeader(skip int, timeout time.Duration) int {
	lead := -1
	eventually(c.t, timeout, "a leader all servers name", func() bool { lead = c.leader(skip); return lead >= 0 })
	return lead
}

// getJSON GETs url into out with a short timeout.
func getJSON(url string, out any) error { return getJSONAs(url, "", out) }

// getJSONAs is getJSON with a bearer token ("" for none).
func getJSONAs(url, token string, out any) error {
	hc := &http.Client{Timeout: 2 * time.Second}
	req, err := http.NewRequest(http.MethodGet, url, nil)
	if err != nil {
		return err
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := hc.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("GET %s: %s", url, resp.Status)
	}
	return json.NewDecoder(resp.Body).Decode(out)
}

// starts returns every "replica started" line of the agents' logs as
// replica ID → start times.
func (c *haCluster) starts() map[string][]time.Time {
	out := map[string][]time.Time{}
	for _, a := range c.agents {
		sc := bufio.NewScanner(strings.NewReader(a.out.String()))
		for sc.Scan() {
			line := sc.Text()
			if !strings.Contains(line, `msg="replica started"`) {
				continue
			}
			ts, id := field(line, "time"), field(line, "replica")
			at, err := time.Parse(time.RFC3339Nano, ts)
			if err == nil && id != "" {
				out[id] = append(out[id], at)
			}
		}
	}
	return out
}

// field returns the value of key=value in a slog text line.
func field(line, key string) string {
	for _, f := range strings.Fields(line) {
		if v, ok := strings.CutPrefix(f, key+"="); ok {
			return v
		}
	}
	return ""
}

// submitter is one CLI client submitting jobs until stopped.
type submitter struct {
	mu    sync.Mutex
	acked map[string]string // job ID → name
	fails int
}

// run submits `sleep 0.3` jobs through the CLI with the server list.
func (s *submitter) run(list string, client int, stop <-chan struct{}) {
	for i := 0; ; i++ {
		select {
		case <-stop:
			return
		default:
		}
		name := fmt.Sprintf("c%d-%d", client, i)
		cmd := exec.Command(binary, "submit", "--server", list, "--name", name, "--gpus", "1", "--", "sleep", "0.3")
		out, err := cmd.Output()
		s.mu.Lock()
		if id := strings.TrimSpace(string(out)); err == nil && id != "" {
			s.acked[id] = name
		} else {
			s.fails++
		}
		s.mu.Unlock()
		time.Sleep(50 * time.Millisecond)
	}
}

// TestHAFailover: 3 servers on a 3-member etcd, 2 agents, 8 CLI clients
// submitting continuously through the server list. The leader is killed
// with SIGKILL haKills times at random moments (and started again); every
// time a new leader must start a replica within 5 s. Afterwards every
// acknowledged submission is there, no replica was ever started twice, and
// a job that ran through every failover still runs on its first replica.
// Then one etcd member is killed (the service goes on), a second one
// (writes fail with a clear 503), and one comes back (writes resume).
func TestHAFailover(t *testing.T) {
	if testing.Short() {
		t.Skip("starts 3 etcd members, 3 servers and 2 agents")
	}
	c := startHACluster(t)
	lead := c.waitLeader(-1, 20*time.Second)
	long := strings.TrimSpace(mustCLI(t, c.list, "submit", "--name", "long", "--gpus", "1", "--", "sleep", "600"))
	waitState(t, c.list, long, 20*time.Second, api.Running)

	sub := &submitter{acked: map[string]string{}}
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for k := range 8 {
		wg.Go(func() { sub.run(c.list, k, stop) })
	}
	var toLeader, toStart []time.Duration
	for kill := range *haKills {
		time.Sleep(time.Duration(300+rand.IntN(1200)) * time.Millisecond)
		t0 := time.Now()
		c.servers[lead].kill9(t)
		next := c.waitLeader(lead, 15*time.Second)
		elected := time.Now()
		var started time.Time
		eventually(t, 15*time.Second, "a replica started by the new leader", func() bool {
			for _, ts := range c.starts() {
				for _, at := range ts {
					if at.After(elected) && (started.IsZero() || at.Before(started)) {
						started = at
					}
				}
			}
			return !started.IsZero()
		})
		toLeader, toStart = append(toLeader, elected.Sub(t0)), append(toStart, started.Sub(t0))
		t.Logf("kill %d: server %d killed; server %d leads after %v, starts a replica after %v",
			kill+1, lead, next, elected.Sub(t0).Round(time.Millisecond), started.Sub(t0).Round(time.Millisecond))
		c.servers[lead] = start(t, fmt.Sprintf("server %d (again)", lead), c.args[lead]...)
		waitHealthy(t, c.addrs[lead])
		lead = next
	}
	close(stop)
	wg.Wait()
	t.Logf("kill → new leader: p50 %v max %v; kill → first start by it: p50 %v max %v (%d kills)",
		pct(toLeader, 50), pct(toLeader, 100), pct(toStart, 50), pct(toStart, 100), len(toStart))
	if m := pct(toStart, 100); m > 5*time.Second {
		t.Errorf("a new leader took %v to schedule, want ≤ 5s", m)
	}
	c.checkAcked(sub)
	if j := job(t, c.list, long); j.State != api.Running || j.Attempt != 1 {
		t.Errorf("the long job after the failovers: %s, attempt %d; want running, attempt 1", j.State, j.Attempt)
	}
	c.etcdLoss(sub)
}

// checkAcked checks that every acknowledged job is stored under its name
// and that no replica was started twice.
func (c *haCluster) checkAcked(sub *submitter) {
	t := c.t
	c.waitLeader(-1, 20*time.Second)
	stored := map[string]string{}
	for _, j := range jobs(t, c.list) {
		stored[j.ID] = j.Name
	}
	sub.mu.Lock()
	defer sub.mu.Unlock()
	lost := 0
	for id, name := range sub.acked {
		if stored[id] != name {
			lost++
			t.Errorf("acknowledged job %s (%s) lost: stored as %q", id, name, stored[id])
		}
	}
	twice := 0
	for id, ts := range c.starts() {
		if len(ts) > 1 {
			twice++
			t.Errorf("replica %s started %d times: %v", id, len(ts), ts)
		}
	}
	t.Logf("%d submissions acknowledged, %d lost; %d failed (not acknowledged); %d jobs stored; %d replicas started, %d of them twice",
		len(sub.acked), lost, sub.fails, len(stored), len(c.starts()), twice)
	if len(sub.acked) == 0 {
		t.Error("no submission was acknowledged")
	}
}

// etcdLoss kills one etcd member (the service goes on once the two left
// have a leader), then a second (writes fail with 503 naming the cause),
// then restarts one (writes resume).
func (c *haCluster) etcdLoss(sub *submitter) {
	t := c.t
	c.etcd.Kill(0)
	killed := time.Now()
	// Member 0 may have been etcd's leader: until the two left elect one
	// (500 ms election timeout, seconds on a loaded host) etcd itself takes
	// no write, and the service answers 503 "may not have been carried
	// out" (seen once, 2026-11-30, with the host's load above 10).
	c.etcd.WaitReady(20 * time.Second)
	mustCLI(t, c.list, "submit", "--name", "one-member-down", "--gpus", "1", "--", "true")
	c.waitStart(killed, "with one etcd member down")
	c.etcd.Kill(1)
	hc := &http.Client{Timeout: 30 * time.Second}
	start := time.Now()
	var wg sync.WaitGroup
	for _, u := range c.addrs {
		wg.Go(func() {
			resp, err := hc.Post(u+"/v1/jobs", "application/json", strings.NewReader(`{"command":["true"],"gpus":1}`))
			if err != nil {
				t.Errorf("POST %s/v1/jobs without quorum: %v", u, err)
				return
			}
			var e api.Error
			_ = json.NewDecoder(resp.Body).Decode(&e)
			resp.Body.Close()
			if resp.StatusCode != http.StatusServiceUnavailable || !strings.Contains(e.Error, "unavailable") &&
				!strings.Contains(e.Error, "no leader") && !strings.Contains(e.Error, "term as leader ended") {
				t.Errorf("POST %s/v1/jobs without quorum: %d %q, want 503 naming the cause", u, resp.StatusCode, e.Error)
			}
			t.Logf("without quorum, %s answers %d after %v: %s", u, resp.StatusCode, time.Since(start).Round(time.Millisecond), e.Error)
		})
	}
	wg.Wait()
	c.etcd.Restart(1)
	start = time.Now()
	id := strings.TrimSpace(mustCLI(t, c.list, "submit", "--name", "quorum-back", "--gpus", "1", "--", "true"))
	t.Logf("a member back: submission %s acknowledged after %v", id, time.Since(start).Round(time.Millisecond))
	c.waitStart(start, "after the quorum came back")
	c.checkAcked(sub)
}

// waitStart waits until an agent starts a replica after since: the
// service schedules.
func (c *haCluster) waitStart(since time.Time, what string) {
	eventually(c.t, 20*time.Second, "a replica started "+what, func() bool {
		for _, ts := range c.starts() {
			for _, at := range ts {
				if at.After(since) {
					return true
				}
			}
		}
		return false
	})
}

// pct returns the p-th percentile (nearest rank) of ds.
func pct(ds []time.Duration, p int) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	s := slices.Clone(ds)
	slices.Sort(s)
	i := max((p*len(s)+99)/100-1, 0)
	return s[min(i, len(s)-1)].Round(time.Millisecond)
}
