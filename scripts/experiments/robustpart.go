package main

import (
	"fmt"
	"slices"
	"strings"
	"sync"
)

// robustPart runs one part of the robustness grid, for quicker looks while
// choosing on the development set (-section robust-scalers or
// robust-energy): "scalers" runs only the elastic workloads' scaler rows,
// "energy" only pack, spread and energy on every workload. extra is added
// to every run (e.g. a flag being tried); two runs go at a time.
func robustPart(bin, part, set, keep string, extra []string) error {
	dir, done, err := robustDir(keep)
	if err != nil {
		return err
	}
	defer done()
	rs, ok := robustSetNamed(set)
	if !ok {
		return fmt.Errorf("-set %q: want one of %s", set, robustSetNames())
	}
	ws, err := robustTraces(dir, rs.seeds)
	if err != nil {
		return err
	}
	rr, err := robustRunPart(bin, part, ws, extra)
	if err != nil {
		return err
	}
	sc := rr.score()
	fmt.Printf("### robust %s, %s seeds %v, extra flags %q\n\n", part, set, rs.seeds, strings.Join(extra, " "))
	fmt.Println("| Done-when figure (issue 28) | cells meeting it |")
	fmt.Println("| --- | --- |")
	if part == "energy" {
		sc.printEnergy()
		fmt.Printf("| sleep vs on: avg JCT at most +2 %% (pack, spread, energy) | %s |\n", rr.sleepPlacers())
		rr.printEnergyMisses()
		return nil
	}
	sc.printScalers()
	fmt.Println()
	fmt.Println("| workload | nodes | scaler | avg JCT s | util | makespan s |")
	fmt.Println("| --- | --- | --- | ---: | ---: | ---: |")
	for i, w := range rr.ws {
		if !w.elastic {
			continue
		}
		for sl := range 2 {
			for _, s := range robustScalers {
				x := rr.scalers[i][sl][s.name]
				fmt.Printf("| %s | %s | %s | %.0f | %.3f | %.0f |\n", w.name(), robustSleeps[sl], s.name, x.AvgJCT, x.GPUUtil, x.Makespan)
			}
		}
	}
	return nil
}

// robustRunPart runs the cells of one part of the grid (robustPart).
func robustRunPart(bin, part string, ws []robustWorkload, extra []string) (*robustRuns, error) {
	rr := &robustRuns{ws: ws, placers: make([][2]map[string]summary, len(ws)), scalers: make([][2]map[string]summary, len(ws))}
	type cell struct {
		i, sl int
		name  string
		args  []string
		scale bool
	}
	var cells []cell
	for i, w := range ws {
		for sl, sleep := range []string{"--sleep=false", "--sleep=true"} {
			base := slices.Concat(strings.Fields(fmt.Sprintf("--trace %s --gpus %s %s", w.trace, robustMixes[w.mix].gpus, sleep)), extra)
			rr.placers[i][sl], rr.scalers[i][sl] = map[string]summary{}, map[string]summary{}
			switch {
			case part == "energy":
				for _, pl := range []string{"pack", "spread", "energy"} {
					cells = append(cells, cell{i, sl, pl, slices.Concat(base, []string{"--placer", pl}), false})
				}
			case part == "scalers" && w.elastic:
				for _, s := range robustScalers {
					cells = append(cells, cell{i, sl, s.name, slices.Concat(base, []string{"--placer", "pack"}, strings.Fields(s.args)), true})
				}
			}
		}
	}
	if part != "energy" && part != "scalers" {
		return nil, fmt.Errorf("robust part %q: want scalers or energy", part)
	}
	out := make([]summary, len(cells))
	errs := make([]error, len(cells))
	var wg sync.WaitGroup
	next := make(chan int)
	for range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for k := range next {
				out[k], errs[k] = run(bin, cells[k].args)
			}
		}()
	}
	for k := range cells {
		next <- k
	}
	close(next)
	wg.Wait()
	for k, c := range cells {
		if errs[k] != nil {
			return nil, errs[k]
		}
		if c.scale {
			rr.scalers[c.i][c.sl][c.name] = out[k]
		} else {
			rr.placers[c.i][c.sl][c.name] = out[k]
		}
	}
	return rr, nil
}

// printEnergyMisses lists the cells in which the energy placer's kWh is
// above the lower of pack's and spread's or its average JCT more than 5 %
// above the better of theirs, with the three runs' figures.
func (rr *robustRuns) printEnergyMisses() {
	fmt.Println()
	fmt.Println("| cell | kWh pack / spread / energy | Δ energy | avg JCT s pack / spread / energy | Δ JCT |")
	fmt.Println("| --- | ---: | ---: | ---: | ---: |")
	for i, w := range rr.ws {
		for sl := range 2 {
			p := rr.placers[i][sl]
			a, b, e := p["pack"], p["spread"], p["energy"]
			dE, dJ := energyDeltas(p)
			if dE <= 1e-9 && dJ <= 0.05 {
				continue
			}
			fmt.Printf("| %s %s | %.0f / %.0f / %.0f | %+.1f %% | %.0f / %.0f / %.0f | %+.1f %% |\n", w.name(), robustSleeps[sl],
				a.EnergyKWh, b.EnergyKWh, e.EnergyKWh, 100*dE, a.AvgJCT, b.AvgJCT, e.AvgJCT, 100*dJ)
		}
	}
}

// sleepPlacers tallies the sleep-vs-on figure (avg JCT asleep at most 2 %
// above its twin with nodes on) over the placer runs of the energy part:
// pack, spread and energy, every workload.
func (rr *robustRuns) sleepPlacers() *tally {
	var t tally
	for i, w := range rr.ws {
		for _, pl := range []string{"pack", "spread", "energy"} {
			d := rr.placers[i][1][pl].AvgJCT/rr.placers[i][0][pl].AvgJCT - 1
			t.add(d <= 0.02, d, w.name()+" "+pl)
		}
	}
	return &t
}
