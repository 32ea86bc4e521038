package e2e

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// The browser tests drive the real headless Chromium (Debian's chromium,
// which `make test` installs) with chromedp: one browser for all of them,
// a tab each.

// chromiumPath finds the browser; "" when none is installed.
func chromiumPath() string {
	if p := os.Getenv("GPUSCHED_CHROMIUM"); p != "" {
		return p
	}
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome", "google-chrome-stable"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	return ""
}

// browser starts headless Chromium for the test and returns its context.
func browser(t *testing.T) context.Context {
	t.Helper()
	path := chromiumPath()
	if path == "" {
		t.Skip("headless Chromium not found: `make test` installs Debian's chromium (make chromium, as root); " +
			"or set GPUSCHED_CHROMIUM to a Chromium binary")
	}
	opts := append(chromedp.DefaultExecAllocatorOptions[:], chromedp.ExecPath(path), chromedp.NoSandbox,
		chromedp.Flag("disable-gpu", true), chromedp.WindowSize(1400, 1000))
	alloc, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancel := chromedp.NewContext(alloc)
	t.Cleanup(func() { cancel(); cancelAlloc() })
	if err := chromedp.Do(ctx); err != nil { // starts the browser
		t.Fatalf("start %s: %v", path, err)
	}
	return ctx
}

// tab is one page of the browser, with what its console reported.
type tab struct {
	t   *testing.T
	ctx context.Context
	mu  sync.Mutex
	bad []string // console errors and uncaught exceptions
}

// newTab opens a tab that records console errors; it closes with the test.
func newTab(t *testing.T, browserCtx context.Context) *tab {
	t.Helper()
	ctx, cancel := chromedp.NewContext(browserCtx)
	tb := &tab{t: t, ctx: ctx}
	if err := chromedp.Do(ctx); err != nil {
		t.Fatal(err)
	}
	messages := chromedp.Console(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		for m, err := range messages {
			if err != nil {
				return
			}
			if m.Type == chromedp.ConsoleError || m.IsException() {
				tb.mu.Lock()
				tb.bad = append(tb.bad, fmt.Sprintf("%s (%s:%d)", m.String(), m.URL, m.Line))
				tb.mu.Unlock()
			}
		}
	}()
	t.Cleanup(func() { cancel(); <-done })
	return tb
}

// do runs actions with a timeout.
func (tb *tab) do(what string, timeout time.Duration, actions ...chromedp.Action[chromedp.Void]) {
	tb.t.Helper()
	ctx, cancel := context.WithTimeout(tb.ctx, timeout)
	defer cancel()
	if err := chromedp.Do(ctx, actions...); err != nil {
		tb.t.Fatalf("%s: %v", what, err)
	}
}

// eval evaluates a JavaScript expression.
func (tb *tab) eval(expr string) any {
	tb.t.Helper()
	ctx, cancel := context.WithTimeout(tb.ctx, 10*time.Second)
	defer cancel()
	v, err := chromedp.Run(ctx, chromedp.Evaluate[any](expr))
	if err != nil {
		tb.t.Fatalf("evaluate %s: %v", expr, err)
	}
	return v
}

// wait waits until the element sel is in the page.
func (tb *tab) wait(what, sel string, timeout time.Duration) {
	tb.t.Helper()
	tb.do("wait for "+what+" ("+sel+")", timeout, chromedp.WaitReady(chromedp.CSS(sel)))
}

// noConsoleErrors fails the test if the page reported an error.
func (tb *tab) noConsoleErrors() {
	tb.t.Helper()
	tb.mu.Lock()
	defer tb.mu.Unlock()
	for _, m := range tb.bad {
		tb.t.Errorf("console: %s", m)
	}
}

// TestBrowser runs the dashboard and the simulator's HTML report in
// headless Chromium.
func TestBrowser(t *testing.T) {
	ctx := browser(t)
	t.Run("console-check", func(t *testing.T) { testConsoleCheck(t, ctx) })
	t.Run("dashboard", func(t *testing.T) { testDashboard(t, ctx) })
	t.Run("philly-report", func(t *testing.T) { testPhillyReport(t, ctx) })
	t.Run("gavel-comparison", func(t *testing.T) { testGavelComparison(t, ctx) })
}

// testConsoleCheck holds the console check to account: a page that logs
// an error, throws, and fails to load a resource is caught three times.
func testConsoleCheck(t *testing.T, browserCtx context.Context) {
	tb := newTab(t, browserCtx)
	page := filepath.Join(t.TempDir(), "bad.html")
	if err := os.WriteFile(page, []byte(`<!doctype html><title>bad</title><img src="missing.png">`+
		`<script>console.error("probe"); setTimeout(function () { throw new Error("thrown probe"); }, 0);</script>`), 0o644); err != nil {
		t.Fatal(err)
	}
	tb.do("open a bad page", 10*time.Second, chromedp.Navigate("file://"+page))
	eventually(t, 10*time.Second, "three console errors", func() bool {
		tb.mu.Lock()
		defer tb.mu.Unlock()
		return len(tb.bad) >= 3
	})
	tb.mu.Lock()
	got := strings.Join(tb.bad, "\n")
	tb.mu.Unlock()
	for _, want := range []string{"probe", "thrown probe", "missing.png"} {
		if !strings.Contains(got, want) {
			t.Errorf("the console check missed %q; it caught:\n%s", want, got)
		}
	}
}

// testDashboard serves the dashboard from `gpusched dev` (4 V100s) with a
// second node (an agent of 2 V100s): it loads without console errors,
// shows a job submitted from its form going from queued to running to
// succeeded without a reload, cancels a job from its button, shows a
// job's page (events, replicas, progress chart, logs) and shows the second
// node going down when its agent is killed.
func testDashboard(t *testing.T, browserCtx context.Context) {
	addr := freeAddr(t)
	url := "http://" + addr
	data := t.TempDir()
	start(t, "dev", "dev", "--listen", addr, "--data", filepath.Join(data, "dev"), "--gpus", "v100=4", "--heartbeat-timeout", "3s")
	waitHealthy(t, url)
	extra := start(t, "agent extra", "agent", "--server", url, "--name", "extra", "--gpus", "v100=2",
		"--data", filepath.Join(data, "extra"), "--stop-replicas-on-exit")
	eventually(t, 20*time.Second, "two ready nodes", func() bool { return strings.Count(mustCLI(t, url, "nodes"), "ready") == 2 })

	tb := newTab(t, browserCtx)
	tb.do("open the dashboard", 20*time.Second, chromedp.Navigate(url+"/ui/"))
	tb.wait("the second node, ready", `#cluster .node[data-node="extra"][data-state="ready"]`, 20*time.Second)
	tb.eval(`window.__loadedOnce = 42`)

	gate1, gate2 := filepath.Join(data, "gate1"), filepath.Join(data, "gate2")
	submit(t, url, "hold-dev", 4, gate(gate1))
	submit(t, url, "hold-extra", 2, gate(gate1))
	tb.do("open the submit form", 10*time.Second, chromedp.Navigate(url+"/ui/#/submit"),
		chromedp.WaitReady(chromedp.CSS(`#submit-form`)))
	tb.eval(`window.__loadedOnce = 42`) // the navigation above loaded the page again
	tb.do("fill and send the form", 10*time.Second,
		chromedp.SetValue(chromedp.CSS(`#f-command`), gate(gate2)+"; echo done from the dashboard"),
		chromedp.SetValue(chromedp.CSS(`#f-gpus`), "1"),
		chromedp.SetValue(chromedp.CSS(`#f-name`), "from-ui"),
		chromedp.Click(chromedp.CSS(`#f-submit`)))
	tb.wait("the submitted banner", `#banner.ok:not([hidden])`, 10*time.Second)
	banner, _ := tb.eval(`document.getElementById('banner').textContent`).(string)
	id := strings.TrimPrefix(banner, "submitted ")
	if !strings.HasPrefix(id, "j") {
		t.Fatalf("banner %q names no job", banner)
	}
	row := `tr[data-job="` + id + `"] [data-state="%s"]`
	tb.wait(id+" queued", fmt.Sprintf(row, "queued"), 10*time.Second)
	touch(t, gate1)
	tb.wait(id+" running", fmt.Sprintf(row, "running"), 20*time.Second)
	touch(t, gate2)
	tb.wait(id+" succeeded", fmt.Sprintf(row, "succeeded"), 20*time.Second)
	if v := tb.eval(`window.__loadedOnce`); v != float64(42) {
		t.Errorf("the page was reloaded (marker %v)", v)
	}

	victim := submit(t, url, "victim", 1, "sleep 300")
	waitState(t, url, victim, 20*time.Second, "running")
	tb.do("cancel "+victim+" from the dashboard", 20*time.Second,
		chromedp.WaitReady(chromedp.CSS(`button[data-cancel="`+victim+`"]`)),
		chromedp.Click(chromedp.CSS(`button[data-cancel="`+victim+`"]`)))
	waitState(t, url, victim, 20*time.Second, "cancelled")
	tb.wait(victim+" cancelled", fmt.Sprintf(`tr[data-job="%s"] [data-state="cancelled"]`, victim), 10*time.Second)

	trainer := submitSteps(t, url, "trainer", 1, "CycleGAN", 60, 100, stateDir(t, data, "trainer"))
	tb.do("open the trainer's page", 10*time.Second, chromedp.Navigate(url+"/ui/#/job/"+trainer))
	tb.wait("its progress chart", `#chart-progress .uplot canvas`, 20*time.Second)
	tb.wait("its replica", `tr[data-replica="`+trainer+`.1.0"]`, 10*time.Second)
	tb.do("open "+id+"'s page", 10*time.Second, chromedp.Navigate(url+"/ui/#/job/"+id))
	tb.wait("its events", `#job-page[data-job="`+id+`"] tr[data-event="succeeded"]`, 10*time.Second)
	logs, _ := tb.eval(`document.getElementById('logs').textContent`).(string)
	if !strings.Contains(logs, "done from the dashboard") {
		t.Errorf("the job page's logs: %q", logs)
	}

	tb.do("back to the cluster view", 10*time.Second, chromedp.Navigate(url+"/ui/#/"))
	tb.wait("the second node, ready", `#cluster .node[data-node="extra"][data-state="ready"]`, 10*time.Second)
	extra.kill9(t)
	tb.wait("the second node, down", `#cluster .node[data-node="extra"][data-state="down"]`, 20*time.Second)
	if v := tb.eval(`document.querySelector('#cluster tr[data-type="v100"] td:last-child').textContent`); v != "2" {
		t.Errorf("down GPUs of type v100: %v, want 2", v)
	}
	tb.noConsoleErrors()
}

// openReport opens a report page and checks that it drew its charts with
// no console error.
func openReport(t *testing.T, browserCtx context.Context, path string) *tab {
	t.Helper()
	tb := newTab(t, browserCtx)
	tb.do("open "+path, 30*time.Second, chromedp.Navigate("file://"+path))
	tb.wait("the page's script", `body[data-ready="1"]`, 30*time.Second)
	for _, id := range []string{"chart-cdf", "chart-util", "chart-queue"} {
		tb.wait(id, `#`+id+`[data-drawn="1"] canvas`, 10*time.Second)
	}
	tb.noConsoleErrors()
	return tb
}

// testPhillyReport writes the report of the Philly trace (../shared's full
// trace when it is there, else the committed 2,000-job head) and opens it.
func testPhillyReport(t *testing.T, browserCtx context.Context) {
	trace, gpus := "../../shared/traces/philly/philly.csv", "v100=2500"
	if _, err := os.Stat(trace); err != nil {
		trace, gpus = "../testdata/traces/philly/philly-head2000.csv", "v100=256"
		t.Logf("the full Philly trace is not beside the checkout: using %s", trace)
	}
	dir := filepath.Join(t.TempDir(), "philly")
	mustRun(t, "sim", "--trace", trace, "--gpus", gpus, "--gpus-per-node", "8", "--report", dir)
	page := filepath.Join(dir, "index.html")
	fi, err := os.Stat(page)
	if err != nil {
		t.Fatal(err)
	}
	if fi.Size() >= 5<<20 {
		t.Errorf("index.html is %d bytes, want under 5 MB", fi.Size())
	}
	t.Logf("%s: index.html %d bytes", trace, fi.Size())
	tb := openReport(t, browserCtx, page)
	if n := tb.eval(`document.querySelectorAll('#timeline-list .timeline').length`); n != float64(8) {
		t.Errorf("%v timelines, want 8", n)
	}
}

// testGavelComparison compares fifo, las and hlas on Gavel's trace (the
// embedded max_min_fairness trace on 8 V100, 8 P100 and 8 K80).
func testGavelComparison(t *testing.T, browserCtx context.Context) {
	dir := filepath.Join(t.TempDir(), "cmp")
	mustRun(t, "sim", "--policy", "fifo,las,hlas", "--report", dir)
	tb := openReport(t, browserCtx, filepath.Join(dir, "index.html"))
	heads := tb.eval(`Array.from(document.querySelectorAll('#summary-table th')).map(function (e) { return e.textContent; }).join(',')`)
	if heads != ",fifo,las,hlas" {
		t.Errorf("summary columns %q, want the three policies", heads)
	}
	if n := tb.eval(`document.querySelectorAll('#summary-table td.best').length`); n == float64(0) {
		t.Error("no best figure marked")
	}
	tb.wait("the power chart", `#chart-power[data-drawn="1"] canvas`, 10*time.Second)
}

// mustRun runs the gpusched binary and fails the test on an error.
func mustRun(t *testing.T, args ...string) string {
	t.Helper()
	out, err := exec.Command(binary, args...).CombinedOutput()
	if err != nil {
		t.Fatalf("gpusched %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return string(out)
}
