package kubebed

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// UpTimeout bounds `scripts/testbed up`, which builds the binaries on a
// machine that has none cached yet.
const UpTimeout = 30 * time.Minute

// ErrNoVolcanoSource is returned (wrapped, naming the path) by Up when
// Options.Volcano is set and the Volcano source snapshot is absent.
var ErrNoVolcanoSource = errors.New("Volcano source not found")

// ErrCannotBuild is returned (wrapped, with the build's output) by Up when
// the bed's binaries are not cached and cannot be built here (no Go module
// proxy, no etcd and no root to install it, a failed build): the tests
// that need a bed skip, saying why; `make test` builds them first.
var ErrCannotBuild = errors.New("the Kubernetes test bed's binaries cannot be built on this machine")

// Options chooses what the bed runs beyond the Kubernetes control plane
// and kwok.
type Options struct {
	// Volcano adds Volcano's CRDs, the Queues root and default, and
	// vc-controller-manager acting on Jobs with schedulerName gpusched.
	Volcano bool
	// VolcanoScheduler also runs vc-scheduler (scheduler name volcano), as
	// a peer to compare with; it implies Volcano.
	VolcanoScheduler bool
	// JobSet adds the JobSet CRD, controller and admission webhooks
	// (built from the Go module sigs.k8s.io/jobset into the bed's cache).
	JobSet bool
	// Kueue adds Kueue's CRDs, controller and batch/v1 Job admission
	// webhooks (Jobs with a kueue.x-k8s.io/queue-name label), topology-aware
	// scheduling included.
	Kueue bool
}

// Bed is a running test bed.
type Bed struct {
	// Dir holds everything of the bed: pki/, logs/, etcd/, run/, and the
	// files below.
	Dir string
	// Kubeconfig is Dir/kubeconfig: the cluster admin (group
	// system:masters) at Server.
	Kubeconfig string
	// Server is the API's URL, e.g. "https://127.0.0.1:40123".
	Server string
	// CA, ClientCert and ClientKey are PEM files for a client that does
	// not read kubeconfig files.
	CA, ClientCert, ClientKey string
	// KubectlPath is the kubectl built with the bed (same version).
	KubectlPath string
	// K8sVersion and KwokVersion are the versions the bed runs.
	K8sVersion, KwokVersion string
	// Volcano and VolcanoScheduler say what runs besides the control plane.
	Volcano, VolcanoScheduler bool
	// JobSet and Kueue say whether their controllers run.
	JobSet, Kueue bool

	script string
}

// Root returns the repository's root: the nearest directory at or above
// the working directory (a test's package directory) holding
// scripts/testbed.
func Root() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", fmt.Errorf("find scripts/testbed: %w", err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "scripts", "testbed")); err == nil {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("find scripts/testbed: not in the gpusched repository")
		}
		dir = parent
	}
}

// VolcanoSource returns the path of the Volcano source snapshot the bed
// builds from: $TESTBED_SHARED/testbed/volcano-src.tar.gz, by default
// ../shared beside the repository root.
func VolcanoSource(root string) string {
	shared := os.Getenv("TESTBED_SHARED")
	if shared == "" {
		shared = filepath.Join(root, "..", "shared")
	}
	return filepath.Join(shared, "testbed", "volcano-src.tar.gz")
}

// Up starts a bed in dir (created if needed) with `scripts/testbed up`,
// and returns once the API answers and pods can be created. The bed stops
// by itself when this process exits; call Down to stop it before.
func Up(ctx context.Context, dir string, opts Options) (*Bed, error) {
	root, err := Root()
	if err != nil {
		return nil, err
	}
	var extra []string // what the bed runs beyond the control plane
	if opts.Volcano || opts.VolcanoScheduler {
		if src := VolcanoSource(root); !exists(src) {
			return nil, fmt.Errorf("kubebed: %w: %s (see %s)", ErrNoVolcanoSource, src,
				filepath.Join(filepath.Dir(src), "README.md"))
		}
		extra = append(extra, "--volcano")
	}
	if opts.VolcanoScheduler {
		extra = append(extra, "--volcano-scheduler")
	}
	if opts.JobSet {
		extra = append(extra, "--jobset")
	}
	if opts.Kueue {
		extra = append(extra, "--kueue")
	}
	args := append([]string{"up", dir, "--owner", strconv.Itoa(os.Getpid())}, extra...)
	script := filepath.Join(root, "scripts", "testbed")
	ctx, cancel := context.WithTimeout(ctx, UpTimeout)
	defer cancel()
	// Build first (at once when cached), so that a machine that cannot
	// build the bed is told apart from a bed that does not start.
	build := append([]string{"build"}, extra...)
	if out, err := exec.CommandContext(ctx, script, build...).CombinedOutput(); err != nil {
		return nil, fmt.Errorf("kubebed: %w (scripts/testbed %s: %v; `make testbed-build` builds them):\n%s",
			ErrCannotBuild, strings.Join(build, " "), err, out)
	}
	cmd := exec.CommandContext(ctx, script, args...)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		return nil, fmt.Errorf("kubebed: scripts/testbed %s: %w\n%s", strings.Join(args, " "), err, out.String())
	}
	bed, err := load(dir)
	if err != nil {
		return nil, err
	}
	bed.script = script
	return bed, nil
}

// load reads dir/bed, the KEY=VALUE description `up` writes.
func load(dir string) (*Bed, error) {
	f, err := os.Open(filepath.Join(dir, "bed"))
	if err != nil {
		return nil, fmt.Errorf("kubebed: read the bed description: %w", err)
	}
	defer f.Close()
	kv, err := parseBed(f)
	if err != nil {
		return nil, fmt.Errorf("kubebed: %s: %w", f.Name(), err)
	}
	return &Bed{
		Dir: dir, Kubeconfig: kv["KUBECONFIG"], Server: kv["SERVER"],
		CA: kv["CA"], ClientCert: kv["CLIENT_CERT"], ClientKey: kv["CLIENT_KEY"],
		KubectlPath: kv["KUBECTL"], K8sVersion: kv["K8S_VERSION"], KwokVersion: kv["KWOK_VERSION"],
		Volcano: kv["VOLCANO"] == "1", VolcanoScheduler: kv["VOLCANO_SCHEDULER"] == "1",
		JobSet: kv["JOBSET"] == "1", Kueue: kv["KUEUE"] == "1",
	}, nil
}

// parseBed reads KEY=VALUE lines; it requires the keys a Bed needs.
func parseBed(r io.Reader) (map[string]string, error) {
	kv := map[string]string{}
	sc := bufio.NewScanner(r)
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		if line == "" {
			continue
		}
		k, v, ok := strings.Cut(line, "=")
		if !ok || k == "" {
			return nil, fmt.Errorf("line %d: %q is not KEY=VALUE", n, line)
		}
		kv[k] = v
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	for _, k := range []string{"SERVER", "KUBECONFIG", "KUBECTL", "CA", "CLIENT_CERT", "CLIENT_KEY"} {
		if kv[k] == "" {
			return nil, fmt.Errorf("no %s", k)
		}
	}
	return kv, nil
}

// Down stops every process of the bed and waits for them to exit.
func (b *Bed) Down() error {
	out, err := exec.Command(b.script, "down", b.Dir).CombinedOutput()
	if err != nil {
		return fmt.Errorf("kubebed: scripts/testbed down %s: %w\n%s", b.Dir, err, out)
	}
	return nil
}

// Env returns the environment for a program that should use the bed:
// os.Environ with KUBECONFIG set and the bed's kubectl first on PATH.
func (b *Bed) Env() []string {
	return append(os.Environ(), "KUBECONFIG="+b.Kubeconfig,
		"PATH="+filepath.Join(b.Dir, "bin")+string(os.PathListSeparator)+os.Getenv("PATH"))
}

// Kubectl runs the bed's kubectl with args and returns its standard
// output; the error holds its standard error.
func (b *Bed) Kubectl(ctx context.Context, args ...string) ([]byte, error) {
	return b.KubectlInput(ctx, "", args...)
}

// KubectlInput is Kubectl with stdin as kubectl's standard input (e.g. a
// manifest for `apply -f -`).
func (b *Bed) KubectlInput(ctx context.Context, stdin string, args ...string) ([]byte, error) {
	cmd := exec.CommandContext(ctx, b.KubectlPath, append([]string{"--kubeconfig", b.Kubeconfig}, args...)...)
	cmd.Stdin = strings.NewReader(stdin)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return stdout.Bytes(), fmt.Errorf("kubectl %s: %w: %s", strings.Join(args, " "), err,
			strings.TrimSpace(stderr.String()))
	}
	return stdout.Bytes(), nil
}

// Log returns the log of one of the bed's processes (e.g.
// "kube-apiserver", "kwok", "vc-controller-manager"), or the read error.
func (b *Bed) Log(name string) string {
	data, err := os.ReadFile(filepath.Join(b.Dir, "logs", name+".log"))
	if err != nil {
		return err.Error()
	}
	return string(data)
}

// Start starts a bed for t in a temporary directory and stops it when t
// ends. It skips t in -short mode, when the bed's binaries cannot be built
// (ErrCannotBuild) and when opts asks for Volcano and its source is
// missing, and fails t when the bed does not start.
func Start(t testing.TB, opts Options) *Bed {
	t.Helper()
	SkipIfShort(t)
	bed, err := Up(context.Background(), t.TempDir(), opts)
	if errors.Is(err, ErrNoVolcanoSource) || errors.Is(err, ErrCannotBuild) {
		t.Skip(err)
	}
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := bed.Down(); err != nil {
			t.Error(err)
		}
	})
	return bed
}

// Shared is one bed for the tests of a package: the first Get starts it,
// Stop (from TestMain, after m.Run) stops it.
type Shared struct {
	opts Options
	once sync.Once
	dir  string
	bed  *Bed
	err  error
}

// NewShared returns a Shared bed with opts, not started yet.
func NewShared(opts Options) *Shared { return &Shared{opts: opts} }

// Get returns the shared bed, starting it on the first call. Like Start,
// it skips t in -short mode, when the binaries cannot be built and when
// Volcano's source is missing, and fails t when the bed did not start (for
// this and every later test).
func (s *Shared) Get(t testing.TB) *Bed {
	t.Helper()
	SkipIfShort(t)
	s.once.Do(func() {
		s.dir, s.err = os.MkdirTemp("", "kubebed-")
		if s.err == nil {
			s.bed, s.err = Up(context.Background(), s.dir, s.opts)
		}
	})
	if errors.Is(s.err, ErrNoVolcanoSource) || errors.Is(s.err, ErrCannotBuild) {
		t.Skip(s.err)
	}
	if s.err != nil {
		t.Fatal(s.err)
	}
	return s.bed
}

// Stop stops the shared bed, if one started, and removes its directory.
func (s *Shared) Stop() error {
	var err error
	if s.bed != nil {
		err = s.bed.Down()
	}
	if s.dir != "" {
		if rerr := os.RemoveAll(s.dir); err == nil && rerr != nil {
			err = fmt.Errorf("kubebed: remove %s: %w", s.dir, rerr)
		}
	}
	return err
}

// SkipIfShort skips t in -short mode: a bed takes seconds to start, and
// minutes on a machine that has not built its binaries yet.
func SkipIfShort(t testing.TB) {
	t.Helper()
	if testing.Short() {
		t.Skip("kubebed: -short: the Kubernetes test bed is not started")
	}
}

func exists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}
