package power_test

import (
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/gpusched/gpusched/core/model"
	"github.com/gpusched/gpusched/core/power"
)

func TestDefaults(t *testing.T) {
	seen := map[string]bool{}
	for _, d := range power.Defaults() {
		if d.Name == "" || d.Name != strings.ToLower(d.Name) || seen[d.Name] {
			t.Errorf("type name %q is empty, not lower case or repeated", d.Name)
		}
		seen[d.Name] = true
		if err := d.Validate(); err != nil {
			t.Errorf("%s: %v", d.Name, err)
		}
		if d.Source == "" {
			t.Errorf("%s: no source", d.Name)
		}
		if got, ok := power.Lookup(strings.ToUpper(d.Name)); !ok || got != d.GPUPower {
			t.Errorf("Lookup(%q) = %v, %v; want %v", strings.ToUpper(d.Name), got, ok, d.GPUPower)
		}
	}
	if _, ok := power.Lookup("p40"); ok {
		t.Error("Lookup found a type that has no defaults")
	}
	if err := power.DefaultNode().Validate(); err != nil {
		t.Errorf("DefaultNode: %v", err)
	}
	// Issue 13: nodes are power-managed by default.
	if n := power.DefaultNode(); !n.Sleeps || n.SleepW != 20 || n.SleepAfterS != 600 || n.WakeS != 300 {
		t.Errorf("DefaultNode = %+v, want asleep at 20 W after 600 s idle, 300 s to wake", n)
	}
	if err := power.DefaultWorkload().Validate(); err != nil {
		t.Errorf("DefaultWorkload: %v", err)
	}
}

// TestEnergyDocTable keeps the table of docs/ENERGY.md in step with
// Defaults.
func TestEnergyDocTable(t *testing.T) {
	doc, err := os.ReadFile("../../docs/ENERGY.md")
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range power.Defaults() {
		row := fmt.Sprintf("| `%s` | %g | %g |", d.Name, d.IdleW, d.MaxW)
		if !strings.Contains(string(doc), row) {
			t.Errorf("docs/ENERGY.md lacks the row %q", row)
		}
	}
	for _, v := range []string{
		fmt.Sprintf("`base_w` | %g", power.DefaultBaseW),
		fmt.Sprintf("`contention_knee` | %g", power.DefaultKnee),
		fmt.Sprintf("`contention_slowdown` | %g", power.DefaultSlowdown),
		fmt.Sprintf("`sleep_w` | %g", power.DefaultSleepW),
		fmt.Sprintf("`sleep_after_s` | %g", power.DefaultSleepAfterS),
		fmt.Sprintf("`wake_s` | %g", power.DefaultWakeS),
	} {
		if !strings.Contains(string(doc), v) {
			t.Errorf("docs/ENERGY.md lacks %q", v)
		}
	}
}

func TestDefaultCluster(t *testing.T) {
	types := []model.GPUType{{Name: "v100", MemMiB: 1, TFLOPS: 1}, {Name: "k80", MemMiB: 1, TFLOPS: 1}}
	c, err := model.NewCluster(types, []model.Node{{Name: "a", Type: 0, GPUs: 8}, {Name: "b", Type: 1, GPUs: 4}})
	if err != nil {
		t.Fatal(err)
	}
	p, err := power.DefaultCluster(c)
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Validate(c); err != nil {
		t.Fatal(err)
	}
	v, _ := power.Lookup("v100")
	k, _ := power.Lookup("k80")
	if p.Types[0] != v || p.Types[1] != k || p.Nodes[1] != power.DefaultNode() {
		t.Errorf("DefaultCluster = %+v", p)
	}
	if got, want := p.NodeWatts(c, 1, 2, 1), power.DefaultBaseW+2*k.IdleW+2*k.MaxW; got != want {
		t.Errorf("NodeWatts(node b, 2 busy) = %v, want %v", got, want)
	}
	p.Nodes[0].Contention.Knee = 2
	if err := p.Validate(c); err == nil || !strings.HasPrefix(err.Error(), "node a: contention knee 2") {
		t.Errorf("Validate of a bad node: %v", err)
	}
	p.Nodes = p.Nodes[:1]
	if err := p.Validate(c); err == nil {
		t.Error("Validate accepted a description with a node missing")
	}
	types[1].Name = "p40"
	c, _ = model.NewCluster(types, []model.Node{{Name: "a", Type: 1, GPUs: 8}})
	if _, err := power.DefaultCluster(c); err == nil || err.Error() != `GPU type "p40" has no default power figures` {
		t.Errorf("DefaultCluster with an unknown type: %v", err)
	}
}
