package main

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/gpusched/gpusched/core/profile"
	"github.com/gpusched/gpusched/internal/assets"
	"github.com/gpusched/gpusched/sim/synth"
)

// The robustness grid of issue 28 (docs/EXPERIMENTS.md): Gavel-style
// workloads from the project's own generator (package synth) at loads 0.3
// to 1.5 of the cluster's capacity, on three type mixes, rigid and elastic,
// each run with idle nodes sleeping and always on, with every placer and
// every scaler. The generator's seeds are split, once and before any
// tuning, into a development set (the only one tuned on) and a held-out
// set; the Done-when figures are reported for each separately. These are
// read-only tables, never written.
var (
	robustDev  = []uint64{1, 2, 3}
	robustHeld = []uint64{101, 102, 103}
	// robustFresh is a second held-out set, fixed on 2026-11-29 before
	// the session's tuning began, because robustHeld had by then been run
	// once after each of four changes: it is run once, to report.
	robustFresh = []uint64{201, 202, 203}
	// robustSealed is a third held-out set, fixed on 2026-11-29 (sixth
	// session) before that session's tuning, because robustFresh had been
	// run once to report: from then on 1–3, 101–103 and 201–203 are all
	// development seeds, and robustSealed is run once, at the end, to report.
	robustSealed = []uint64{301, 302, 303}
	// robustVault is a fourth held-out set, fixed on 2026-11-29 (seventh
	// session) before that session's tuning, because robustSealed had been
	// run once to report: from then on every other set is a development
	// set, and robustVault is run once, at the end, to report.
	robustVault = []uint64{401, 402, 403}
	// robustReserve is a fifth held-out set, fixed on 2026-11-29 at the
	// seventh session's end, right after robustVault had been run once to
	// report: the held-out set of any change made after that run.
	robustReserve = []uint64{501, 502, 503}
	// robustLocker is a sixth held-out set, fixed on 2026-11-29 at the
	// eighth session's end, right after robustReserve had been run once to
	// report: the held-out set of any change made after that run.
	robustLocker = []uint64{601, 602, 603}
	// robustCellar is a seventh held-out set, fixed on 2026-11-30 in the
	// ninth session, right after robustLocker had been run once to
	// report: the held-out set of any change made after that run.
	robustCellar = []uint64{701, 702, 703}
	// robustAttic is an eighth held-out set, fixed on 2026-11-30 at the
	// ninth session's end, right after robustCellar had been run once to
	// report: the held-out set of any change made after that run.
	robustAttic = []uint64{801, 802, 803}
	// robustLoads are offered loads: V100-GPU-seconds of work submitted
	// per second ÷ the cluster's GPUs (robustRate).
	robustLoads = []float64{0.3, 0.6, 1.0, 1.5}
	robustMixes = []struct{ name, gpus string }{
		{"even", "v100=16,p100=16,k80=16"},
		{"fast", "v100=32,p100=8,k80=8"},
		{"slow", "v100=8,p100=8,k80=32"},
	}
	robustPlacers = []string{"pack", "spread", "energy", "hetero", "fit"}
	// robustScalers are the scaler settings of the elastic workloads: the
	// defaults (reclaim on; threshold p=1 et=0.8 st=1), threshold with the
	// seed's example elasticConfig, and the seeds' rules as written
	// (testdata/config/seed000.yaml, --reclaim=false).
	robustScalers = []struct{ name, args string }{
		{"none", "--scaler none"},
		{"threshold", "--scaler threshold"},
		{"fulfillment", "--scaler fulfillment"},
		{"threshold p=0.3 et=0.3 st=0.9", "--scaler threshold --elastic-proportion 0.3 --expand-threshold 0.3 --scaling-threshold 0.9"},
		{"threshold as written", "--scaler threshold --config testdata/config/seed000.yaml"},
		{"fulfillment as written", "--scaler fulfillment --reclaim=false"},
	}
)

// robustJobs is the number of jobs of a grid workload, and robustGPUs the
// GPUs of every mix.
const (
	robustJobs = 200
	robustGPUs = 48
)

// robustWorkload is one workload of the grid.
type robustWorkload struct {
	load    float64
	mix     int
	elastic bool
	seed    uint64
	trace   string
}

func (w robustWorkload) name() string {
	kind := "rigid"
	if w.elastic {
		kind = "elastic"
	}
	return fmt.Sprintf("%.1f %s %s s%d", w.load, robustMixes[w.mix].name, kind, w.seed)
}

// robustRate returns the arrival rate (jobs per hour) that offers load of a
// cluster of gpus GPUs: load·gpus·3600 ÷ the mean V100-GPU-seconds of a
// job, measured on 20,000 jobs of the generator (seed 0).
func robustRate(m *profile.Matrix, load float64, gpus int) (float64, error) {
	jobs, err := synth.Generate(m, synth.Options{Jobs: 20000, Rate: 1, Seed: 0})
	if err != nil {
		return 0, err
	}
	var work float64
	for _, j := range jobs {
		for _, p := range m.Points(j.Model, "v100") {
			if p.GPUs == j.GPUs {
				work += float64(j.GPUs) * float64(j.Steps) / p.Rate
			}
		}
	}
	return load * float64(gpus) * 3600 / (work / float64(len(jobs))), nil
}

// robustTraces writes the workloads of seeds into dir.
func robustTraces(dir string, seeds []uint64) ([]robustWorkload, error) {
	m, err := profile.ParseMatrix("embedded throughput matrix", assets.Throughputs())
	if err != nil {
		return nil, err
	}
	var ws []robustWorkload
	for _, load := range robustLoads {
		rate, err := robustRate(m, load, robustGPUs)
		if err != nil {
			return nil, err
		}
		for mix := range robustMixes {
			for _, elastic := range []bool{false, true} {
				for _, seed := range seeds {
					w := robustWorkload{load: load, mix: mix, elastic: elastic, seed: seed}
					share := 0.0
					if elastic {
						share = 0.5
					}
					jobs, err := synth.Generate(m, synth.Options{Jobs: robustJobs, Rate: rate, Seed: seed, Data: true, Elastic: share})
					if err != nil {
						return nil, err
					}
					w.trace = filepath.Join(dir, strings.ReplaceAll(w.name(), " ", "_")+".jsonl")
					if err := writeTrace(w.trace, jobs); err != nil {
						return nil, err
					}
					ws = append(ws, w)
				}
			}
		}
	}
	return ws, nil
}

func writeTrace(path string, jobs []synth.Job) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	w := bufio.NewWriter(f)
	if err := synth.WriteJSONL(w, jobs); err != nil {
		f.Close()
		return err
	}
	if err := w.Flush(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// robustRuns holds a set's figures: by workload, sleep (0 on, 1 asleep),
// then placer or scaler name.
type robustRuns struct {
	ws      []robustWorkload
	placers [][2]map[string]summary
	scalers [][2]map[string]summary
}

// robustRunSet runs every cell of the workloads.
func robustRunSet(bin string, ws []robustWorkload) (*robustRuns, error) {
	rr := &robustRuns{ws: ws, placers: make([][2]map[string]summary, len(ws)), scalers: make([][2]map[string]summary, len(ws))}
	for i, w := range ws {
		for sl, sleep := range []string{"--sleep=false", "--sleep=true"} {
			base := fmt.Sprintf("--trace %s --gpus %s %s", w.trace, robustMixes[w.mix].gpus, sleep)
			rr.placers[i][sl] = map[string]summary{}
			for _, pl := range robustPlacers {
				s, err := run(bin, strings.Fields(base+" --placer "+pl))
				if err != nil {
					return nil, err
				}
				rr.placers[i][sl][pl] = s
			}
			if !w.elastic {
				continue
			}
			rr.scalers[i][sl] = map[string]summary{}
			for _, sc := range robustScalers {
				s, err := run(bin, strings.Fields(base+" --placer pack "+sc.args))
				if err != nil {
					return nil, err
				}
				rr.scalers[i][sl][sc.name] = s
			}
		}
	}
	return rr, nil
}

// robustSet is a named set of the generator's seeds (-set).
type robustSet struct {
	name, title string
	seeds       []uint64
}

// robustSets are the seed sets in the order the grid prints them.
// Read-only.
var robustSets = []robustSet{
	{"dev", "development", robustDev}, {"held", "held-out", robustHeld},
	{"fresh", "fresh held-out", robustFresh}, {"sealed", "sealed held-out", robustSealed},
	{"vault", "vault (fourth held-out)", robustVault}, {"reserve", "reserve (fifth held-out)", robustReserve},
	{"locker", "locker (sixth held-out)", robustLocker}, {"cellar", "cellar (seventh held-out)", robustCellar},
	{"attic", "attic (eighth held-out)", robustAttic},
}

// robustSetNamed returns the seed set called name.
func robustSetNamed(name string) (robustSet, bool) {
	for _, s := range robustSets {
		if s.name == name {
			return s, true
		}
	}
	return robustSet{}, false
}

// robustSetNames lists the sets' names for an error message.
func robustSetNames() string {
	names := make([]string, len(robustSets))
	for i, s := range robustSets {
		names[i] = s.name
	}
	return strings.Join(names, ", ")
}

// robust prints the grid's tables for the development and the held-out
// seeds (set: dev, held, fresh, sealed, vault, reserve, locker, cellar, attic, both — dev and held — or
// all, which is dev, held and fresh); the traces are written into keep, and
// kept, when it is not empty.
func robust(bin, set, keep string) error {
	dir, done, err := robustDir(keep)
	if err != nil {
		return err
	}
	defer done()
	want := map[string][]string{"both": {"dev", "held"}, "all": {"dev", "held", "fresh"}}[set]
	if want == nil {
		want = []string{set}
	}
	if _, ok := robustSetNamed(want[0]); !ok {
		return fmt.Errorf("-set %q: want %s, both or all", set, robustSetNames())
	}
	fmt.Println("## Issue 28: the robustness grid")
	fmt.Println()
	for _, s := range robustSets {
		if !slices.Contains(want, s.name) {
			continue
		}
		ws, err := robustTraces(dir, s.seeds)
		if err != nil {
			return err
		}
		rr, err := robustRunSet(bin, ws)
		if err != nil {
			return err
		}
		fmt.Printf("### %s seeds %v\n\n", s.title, s.seeds)
		rr.print()
	}
	return nil
}

// robustDir returns the folder for the grid's traces: keep, created if
// need be, or a temporary folder that done removes.
func robustDir(keep string) (dir string, done func(), err error) {
	if keep != "" {
		return keep, func() {}, os.MkdirAll(keep, 0o755)
	}
	tmp, err := os.MkdirTemp("", "robust-exp-")
	if err != nil {
		return "", nil, err
	}
	return tmp, func() { os.RemoveAll(tmp) }, nil
}
