package recipe

import (
	"strings"
	"testing"

	"github.com/gpusched/gpusched/core/engine"
	"github.com/gpusched/gpusched/core/placer"
)

func TestNew(t *testing.T) {
	tests := []struct {
		names Names
		err   string
	}{
		{Defaults(), ""},
		{Names{"srtf", "pack", "none"}, ""},
		{Names{"lottery", "pack", "none"}, `unknown policy "lottery" (known: fifo, srtf, hlas, las`},
		{Names{"fifo", "random", "none"}, `unknown placer "random" (known: pack, spread, hetero, energy, fit)`},
		{Names{"fifo", "pack", "magic"}, `unknown scaler "magic" (known: none, threshold, fulfillment)`},
	}
	for _, tc := range tests {
		e, err := New(tc.names, Options{})
		if tc.err == "" {
			if err != nil {
				t.Errorf("%v: %v", tc.names, err)
				continue
			}
			if p, pl, sc := e.Names(); p != tc.names.Policy || pl != tc.names.Placer || sc != "none" {
				t.Errorf("%v: engine names %s %s %s", tc.names, p, pl, sc)
			}
			continue
		}
		if err == nil || !strings.Contains(err.Error(), tc.err) {
			t.Errorf("%v: error %v, want %q", tc.names, err, tc.err)
		}
	}
}

// named wraps a placer and renames it, to see that the engine got the
// wrapper.
type named struct {
	engine.Placer
	inner string
}

func (n named) Name() string { return "wrapped " + n.inner }

func TestWrapPlacer(t *testing.T) {
	o := DefaultOptions()
	var got string
	o.WrapPlacer = func(p engine.Placer) engine.Placer {
		got = p.Name()
		return named{p, p.Name()}
	}
	e, err := New(Names{"fifo", "hetero", "none"}, o)
	if err != nil {
		t.Fatal(err)
	}
	if _, pl, _ := e.Names(); got != "hetero" || pl != "wrapped hetero" {
		t.Errorf("wrapper saw %q, engine's placer is %q", got, pl)
	}
}

func TestNewWithPlacer(t *testing.T) {
	e, err := NewWithPlacer(Names{"hlas", "pack", "none"}, DefaultOptions(), placer.Pack{})
	if err != nil {
		t.Fatal(err)
	}
	if p, pl, sc := e.Names(); p != "hlas" || pl != "pack" || sc != "none" {
		t.Errorf("names %s %s %s", p, pl, sc)
	}
	if _, err := NewWithPlacer(Names{"fifo", "energy", "none"}, DefaultOptions(), placer.Pack{}); err == nil {
		t.Error("a placer under another name is accepted")
	}
	if _, err := NewWithPlacer(Names{"lottery", "pack", "none"}, DefaultOptions(), placer.Pack{}); err == nil {
		t.Error("an unknown policy is accepted")
	}
}
