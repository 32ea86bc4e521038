package main

import (
	"fmt"
	"math"
)

// tally counts the cells of one Done-when figure that meet it.
type tally struct {
	met, total int
	sum, worst float64 // sum and worst of the figure's Δ (fractions)
	worstAt    string
}

func (t *tally) add(ok bool, d float64, at string) {
	t.total++
	if ok {
		t.met++
	}
	t.sum += d
	if t.total == 1 || d > t.worst {
		t.worst, t.worstAt = d, at
	}
}

func (t *tally) String() string {
	if t.total == 0 {
		return "no cells"
	}
	return fmt.Sprintf("%d of %d (%.0f %%); mean Δ %+.1f %%, worst %+.1f %% (%s)", t.met, t.total,
		100*float64(t.met)/float64(t.total), 100*t.sum/float64(t.total), 100*t.worst, t.worstAt)
}

// robustSleeps names the two node settings of the grid, by index.
var robustSleeps = [2]string{"on", "sleep"}

// robustScore holds a set's Done-when tallies.
type robustScore struct {
	energyLE, energyOver2, energyJCT tally
	sleep                            tally
	// scaler is the Done-when figure of each scaler row; scalerJCT and
	// scalerUtil are its two halves, counted apart.
	scaler, scalerJCT, scalerUtil map[string]*tally
}

// energyDeltas returns, for one cell's placer runs p, the energy placer's
// kWh over the lower of pack's and spread's, and its average JCT over the
// better of theirs, each minus 1.
func energyDeltas(p map[string]summary) (dE, dJ float64) {
	bestE := min(p["pack"].EnergyKWh, p["spread"].EnergyKWh)
	bestJ := min(p["pack"].AvgJCT, p["spread"].AvgJCT)
	return p["energy"].EnergyKWh/bestE - 1, p["energy"].AvgJCT/bestJ - 1
}

// printEnergy writes the energy placer's three Done-when rows.
func (sc *robustScore) printEnergy() {
	fmt.Printf("| energy ≤ the lower of pack and spread (target ≥ 90 %%) | %s |\n", &sc.energyLE)
	fmt.Printf("| energy at most 2 %% above the lower (target: all) | %s |\n", &sc.energyOver2)
	fmt.Printf("| energy placer's avg JCT at most 5 %% above the better of pack and spread | %s |\n", &sc.energyJCT)
}

// score computes the Done-when tallies of issue 28.
func (rr *robustRuns) score() robustScore {
	sc := robustScore{scaler: map[string]*tally{}, scalerJCT: map[string]*tally{}, scalerUtil: map[string]*tally{}}
	for _, s := range robustScalers[1:] {
		sc.scaler[s.name], sc.scalerJCT[s.name], sc.scalerUtil[s.name] = &tally{}, &tally{}, &tally{}
	}
	for i, w := range rr.ws {
		for sl := range 2 {
			at := w.name() + " " + robustSleeps[sl]
			p := rr.placers[i][sl]
			dE, dJ := energyDeltas(p)
			sc.energyLE.add(dE <= 1e-9, dE, at)
			sc.energyOver2.add(dE <= 0.02, dE, at)
			sc.energyJCT.add(dJ <= 0.05, dJ, at)
			if sl == 1 {
				for _, pl := range robustPlacers {
					d := p[pl].AvgJCT/rr.placers[i][0][pl].AvgJCT - 1
					sc.sleep.add(d <= 0.02, d, w.name()+" "+pl)
				}
				for _, s := range robustScalers {
					if w.elastic {
						d := rr.scalers[i][1][s.name].AvgJCT/rr.scalers[i][0][s.name].AvgJCT - 1
						sc.sleep.add(d <= 0.02, d, w.name()+" pack "+s.name)
					}
				}
			}
			if !w.elastic {
				continue
			}
			none := rr.scalers[i][sl]["none"]
			for _, s := range robustScalers[1:] {
				x := rr.scalers[i][sl][s.name]
				d := x.AvgJCT/none.AvgJCT - 1
				util := x.GPUUtil >= none.GPUUtil-1e-9
				sc.scaler[s.name].add(d <= 0.02 && util, d, at)
				sc.scalerJCT[s.name].add(d <= 0.02, d, at)
				sc.scalerUtil[s.name].add(util, none.GPUUtil-x.GPUUtil, at)
			}
		}
	}
	return sc
}

// print writes the set's Done-when summary and its per-workload table.
func (rr *robustRuns) print() {
	sc := rr.score()
	fmt.Println("| Done-when figure (issue 28) | cells meeting it |")
	fmt.Println("| --- | --- |")
	sc.printEnergy()
	fmt.Printf("| sleep vs on: avg JCT at most +2 %% (target: all) | %s |\n", &sc.sleep)
	sc.printScalers()
	fmt.Println()
	fmt.Println("| workload | nodes | energy kWh: pack / spread / energy | Δ energy | Δ JCT (energy) | worst Δ JCT asleep vs on | threshold Δ JCT, util | fulfillment Δ JCT, util |")
	fmt.Println("| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: |")
	for i, w := range rr.ws {
		for sl := range 2 {
			p := rr.placers[i][sl]
			dE, dJ := energyDeltas(p)
			worst := "–"
			if sl == 1 {
				d := math.Inf(-1)
				for _, pl := range robustPlacers {
					d = max(d, p[pl].AvgJCT/rr.placers[i][0][pl].AvgJCT-1)
				}
				worst = fmt.Sprintf("%+.1f %%", 100*d)
			}
			thr, ful := "–", "–"
			if w.elastic {
				none := rr.scalers[i][sl]["none"]
				f := func(x summary) string {
					return fmt.Sprintf("%+.1f %%, %.3f vs %.3f", 100*(x.AvgJCT/none.AvgJCT-1), x.GPUUtil, none.GPUUtil)
				}
				thr, ful = f(rr.scalers[i][sl]["threshold"]), f(rr.scalers[i][sl]["fulfillment"])
			}
			fmt.Printf("| %s | %s | %.0f / %.0f / %.0f | %+.1f %% | %+.1f %% | %s | %s | %s |\n", w.name(), robustSleeps[sl],
				p["pack"].EnergyKWh, p["spread"].EnergyKWh, p["energy"].EnergyKWh, 100*dE,
				100*dJ, worst, thr, ful)
		}
	}
	fmt.Println()
}

// printScalers writes the rows of the scalers' Done-when figures.
func (sc *robustScore) printScalers() {
	for _, s := range robustScalers[1:] {
		fmt.Printf("| %s: util ≥ and avg JCT ≤ +2 %% against none (target ≥ 90 %%) | %s |\n", s.name, sc.scaler[s.name])
		fmt.Printf("| %s: avg JCT ≤ +2 %% against none, alone | %s |\n", s.name, sc.scalerJCT[s.name])
		j := sc.scalerUtil[s.name]
		fmt.Printf("| %s: util ≥ none's, alone | %d of %d; worst %.3f below none's (%s) |\n", s.name, j.met, j.total, j.worst, j.worstAt)
	}
}
