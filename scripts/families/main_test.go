package main

import "testing"

// TestSeedSets: the development, held-out and fresh held-out seeds are
// disjoint, so that no seed tuned on is ever reported as held out.
func TestSeedSets(t *testing.T) {
	seen := map[uint64]string{}
	for name, seeds := range map[string][]uint64{"dev": devSeeds, "heldout": heldOutSeeds, "fresh": freshSeeds} {
		if len(seeds) == 0 {
			t.Errorf("%s: no seeds", name)
		}
		for _, s := range seeds {
			if other, ok := seen[s]; ok {
				t.Errorf("seed %d is in both %s and %s", s, other, name)
			}
			seen[s] = name
		}
	}
}

// TestFamilies: every family has a unique name, a positive load, and a
// way of drawing its shapes that fits its source (Gavel's generator for
// "gavel", a trace with a format otherwise).
func TestFamilies(t *testing.T) {
	names := map[string]bool{}
	for _, f := range families() {
		if names[f.name] {
			t.Errorf("family %s twice", f.name)
		}
		names[f.name] = true
		if !(f.load > 0) {
			t.Errorf("%s: load %v", f.name, f.load)
		}
		switch {
		case f.source == "gavel" && f.draw == "gavel" && f.format == "":
		case f.source != "gavel" && (f.draw == "window" || f.draw == "resample") && f.format != "":
		default:
			t.Errorf("%s: source %q, format %q, draw %q do not fit", f.name, f.source, f.format, f.draw)
		}
	}
}
