package energy

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"math"
	"slices"
	"time"

	"github.com/gpusched/gpusched/core/calibrate"
	"github.com/gpusched/gpusched/core/placer"
	"github.com/gpusched/gpusched/service/api"
	"github.com/gpusched/gpusched/service/store"
)

// Learned thresholds (docs/ENERGY.md, "Learned thresholds"): every stored
// power sample is tagged with the algorithm type (placer.Family) of the
// jobs on its node when they all have one; the samples of a class and type,
// averaged per load (calibrationRows), are calibrated with calibrate.Fit —
// the algorithm of gpusched calibrate — whenever the class has collected
// Config.MinNewSamples new samples of the type and those new samples
// span the load range — from one busy GPU to all of them, at no fewer
// distinct loads than calibrate needs and three quarters of the nodes'
// GPUs (spans): a new ramp, up or down, that skipped few loads —; also
// whenever a sample at a load the class had no sample of makes all its
// samples span the range, so that a ramp seen in parts is fitted as soon
// as it is complete, and again as it fills in. Every fit uses all the
// class's samples of the type. And on demand (Recalibrate). A
// successful fit replaces the thresholds in use; a failed one leaves them
// and says why. The fits are stored under calibrationPrefix + class.
const calibrationPrefix = "calibration/"

// learnKey is a class and an algorithm type.
type learnKey struct{ class, family string }

// learnState is what a class learned for one algorithm type.
type learnState struct {
	// ok: res holds thresholds in use, fitted at at.
	ok  bool
	res calibrate.Result
	at  time.Time
	// err is the latest attempt's failure (empty after a success).
	err string
	// fresh counts the samples collected since the latest attempt, lo and
	// hi their lowest and highest load doing work, loads their distinct
	// loads doing work.
	fresh  int
	lo, hi float64
	loads  map[float64]bool
	// known are the loads doing work of all the class's samples of the
	// type (nil until first needed).
	known map[float64]bool
}

// learnedRecord is one fit as the store keeps it.
type learnedRecord struct {
	Family string           `json:"family"`
	Result calibrate.Result `json:"result"`
	At     time.Time        `json:"at"`
}

// loadLearned reads the stored fits of every class.
func (l *Live) loadLearned(ctx context.Context) error {
	kvs, _, err := l.store.List(ctx, calibrationPrefix)
	if err != nil {
		return fmt.Errorf("server: load learned thresholds: %w", err)
	}
	for _, kv := range kvs {
		var recs []learnedRecord
		if err := json.Unmarshal(kv.Value, &recs); err != nil {
			l.log.Error("stored thresholds are unreadable; dropped", "key", kv.Key, "err", err)
			continue
		}
		class := kv.Key[len(calibrationPrefix):]
		for _, r := range recs {
			l.learned[learnKey{class, r.Family}] = &learnState{ok: true, res: r.Result, at: r.At}
		}
	}
	return nil
}

// nodeFamily is the algorithm type of jobs, the jobs running on a node,
// when they all have the same ("" when it runs none or jobs of several
// types).
func nodeFamily(jobs []JobOn) string {
	f := ""
	for _, j := range jobs {
		jf := placer.Family(j.Model)
		if f != "" && jf != f {
			return ""
		}
		f = jf
	}
	return f
}

// noteSample counts a new sample x of node n for its class's learning and
// calibrates the class when its new samples are enough and span the load
// range.
func (l *Live) noteSample(w World, n *Node, x PowerSample, now time.Time) {
	c := l.classOf(n)
	if c == nil || x.Family == "" {
		return
	}
	k := learnKey{c.name, x.Family}
	ls := l.learned[k]
	if ls == nil {
		ls = &learnState{}
		l.learned[k] = ls
	}
	if ls.fresh == 0 {
		ls.lo, ls.hi, ls.loads = 2, -1, map[float64]bool{}
	}
	if ls.known == nil {
		ls.known = map[float64]bool{}
		for _, r := range l.classRows(w, c.name, x.Family) {
			if r.Load > 0 && r.Throughput > 0 {
				ls.known[r.Load] = true
			}
		}
	}
	ls.fresh++
	grown := false
	if ld := math.Round(x.Load*1e4) / 1e4; x.Load > 0 && x.Throughput > 0 {
		ls.lo, ls.hi = min(ls.lo, x.Load), max(ls.hi, x.Load)
		ls.loads[ld] = true
		if !ls.known[ld] {
			ls.known[ld] = true
			lo, hi := loadRange(ls.known)
			grown = spans(lo, hi, len(ls.known), c.gpus)
		}
	}
	ramp := ls.fresh >= l.cfg.MinNewSamples && spans(ls.lo, ls.hi, len(ls.loads), c.gpus)
	if !ramp && !grown {
		return
	}
	_ = l.fit(k, ls, l.classRows(w, c.name, x.Family), now)
	// The next ramp starts where this one ended (at full load, say, for
	// one that goes down next).
	ls.fresh, ls.lo, ls.hi, ls.loads = 1, x.Load, x.Load, map[float64]bool{math.Round(x.Load*1e4) / 1e4: true}
}

// loadRange returns the lowest and highest of a set of loads.
func loadRange(loads map[float64]bool) (lo, hi float64) {
	lo, hi = 2, -1
	for l := range loads {
		lo, hi = min(lo, l), max(hi, l)
	}
	return lo, hi
}

// spans reports whether new samples at n distinct loads from lo to hi span
// the load range of a node of gpus GPUs: from one busy GPU to all of them,
// as a ramp does (a ramp without its low loads cannot show the falling
// region, one without its high loads the rising one), at no fewer loads
// than calibrate.MinSamples and three quarters of the GPUs.
func spans(lo, hi float64, n, gpus int) bool {
	const eps = 1e-3
	return lo <= 1/float64(gpus)+eps && hi >= 1-eps && n >= max(calibrate.MinSamples, (3*gpus+3)/4)
}

// classRows returns the calibration rows of a class and algorithm type: the
// samples of its nodes tagged with the type, averaged per load.
func (l *Live) classRows(w World, class, family string) []PowerSample {
	var samples []PowerSample
	for _, name := range slices.Sorted(maps.Keys(l.power)) {
		n := node(w, name)
		if c := l.classOf(n); c == nil || c.name != class {
			continue
		}
		for _, x := range l.power[name].samples {
			if x.Family == family {
				samples = append(samples, x)
			}
		}
	}
	return calibrationRows(samples)
}

// fit calibrates class and type k on rows; a success replaces the
// thresholds in use and is stored. It returns the fit's error.
func (l *Live) fit(k learnKey, ls *learnState, rows []PowerSample, now time.Time) error {
	ls.fresh = 0
	samples := make([]calibrate.Sample, len(rows))
	for i, r := range rows {
		samples[i] = calibrate.Sample{Load: r.Load, PowerW: r.PowerW, Throughput: r.Throughput}
	}
	res, err := calibrate.FitResult(samples, l.cfg.Calibration)
	if err != nil {
		ls.err = err.Error()
		l.log.Warn("calibration failed; thresholds unchanged", "class", k.class, "family", k.family, "err", err)
		return err
	}
	ls.ok, ls.res, ls.at, ls.err = true, res, now.UTC(), ""
	l.dirty = true
	l.log.Info("thresholds learned", "class", k.class, "family", k.family, "th1", round3(res.Th1), "th2", round3(res.Th2),
		"samples", res.Samples, "noise", round3(res.Noise))
	l.saveLearned(k.class)
	return nil
}

// saveLearned writes a class's fits (an error is logged: the thresholds
// are learned again from the samples after a restart).
func (l *Live) saveLearned(class string) {
	var recs []learnedRecord
	for k, ls := range l.learned {
		if k.class == class && ls.ok {
			recs = append(recs, learnedRecord{Family: k.family, Result: ls.res, At: ls.at})
		}
	}
	slices.SortFunc(recs, func(a, b learnedRecord) int { return cmp.Compare(a.Family, b.Family) })
	data, err := json.Marshal(recs)
	if err == nil {
		_, err = l.store.Txn(writeCtx(), store.OpPut(calibrationPrefix+class, data))
	}
	if err != nil {
		l.log.Error("cannot store learned thresholds", "class", class, "err", err)
	}
}

// thresholdsOf returns the thresholds in use for class c and algorithm
// type family: the learned ones, else the class's defaults.
func (l *Live) thresholdsOf(c *nodeClass, family string) api.Thresholds {
	th, level := c.defaults()
	out := api.Thresholds{Family: family, Th1: th.Th1, Th2: th.Th2, Source: c.source, Level: level}
	if ls := l.learned[learnKey{c.name, family}]; ls != nil {
		out.NewSamples, out.Error = ls.fresh, ls.err
		if ls.ok {
			out.Th1, out.Th2, out.Source = ls.res.Th1, ls.res.Th2, api.ThresholdsLearned
			out.Samples, out.Noise, out.Level, out.FittedAt = ls.res.Samples, ls.res.Noise, ls.res.Level, ptr(ls.at)
		}
	}
	return out
}

// Calibration returns the thresholds in use for every class of a known
// node and every algorithm type it has samples or thresholds of, by class
// and type (the default type first).
func (l *Live) Calibration(w World) api.Calibration {
	out := api.Calibration{Classes: []api.ClassThresholds{}}
	members := map[string][]string{}
	for _, name := range w.NodeNames() {
		if c := l.classOf(node(w, name)); c != nil {
			members[c.name] = append(members[c.name], name)
		}
	}
	for _, k := range l.learnKeys(w) {
		rows := 0
		for _, r := range l.classRows(w, k.class, k.family) {
			if r.Load > 0 && r.Throughput > 0 {
				rows++
			}
		}
		out.Classes = append(out.Classes, api.ClassThresholds{Class: k.class, Nodes: members[k.class],
			Thresholds: l.thresholdsOf(l.classes[k.class], k.family), Rows: rows})
	}
	return out
}

// Recalibrate fits every class and algorithm type with enough samples now,
// whether or not they span the load range or are new, and returns the
// thresholds in use afterwards (a failed fit shows its error and keeps the
// thresholds). gpusched calibrate --from-server calls it.
func (l *Live) Recalibrate(w World) api.Calibration {
	now := l.now()
	for _, k := range l.learnKeys(w) {
		rows := l.classRows(w, k.class, k.family)
		ls := l.learned[k]
		if ls == nil {
			ls = &learnState{}
			l.learned[k] = ls
		}
		_ = l.fit(k, ls, rows, now)
	}
	return l.Calibration(w)
}

// learnKeys returns every class of a known node with the algorithm types
// its samples or fits have; the default type for each class.
func (l *Live) learnKeys(w World) []learnKey {
	seen := map[learnKey]bool{}
	for _, name := range w.NodeNames() {
		c := l.classOf(node(w, name))
		if c == nil {
			continue
		}
		seen[learnKey{c.name, placer.DefaultFamily}] = true
		if np := l.power[name]; np != nil {
			for _, x := range np.samples {
				if x.Family != "" {
					seen[learnKey{c.name, x.Family}] = true
				}
			}
		}
	}
	for k := range l.learned {
		if l.classes[k.class] != nil {
			seen[k] = true
		}
	}
	keys := make([]learnKey, 0, len(seen))
	for k := range seen {
		keys = append(keys, k)
	}
	slices.SortFunc(keys, func(a, b learnKey) int {
		return cmp.Or(cmp.Compare(a.class, b.class), cmp.Compare(familyRank(a.family), familyRank(b.family)), cmp.Compare(a.family, b.family))
	})
	return keys
}

// familyRank puts the default algorithm type first.
func familyRank(f string) int {
	if f == placer.DefaultFamily {
		return 0
	}
	return 1
}

// round3 rounds for logs.
func round3(v float64) float64 { return float64(int64(v*1000+0.5)) / 1000 }
