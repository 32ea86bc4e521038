package config

import (
	"fmt"
	"strings"
	"testing"

	"github.com/gpusched/gpusched/core/model"
)

// describe renders a cluster as "type:mem:tflops ... | node:type:gpus ...".
func describe(c *model.Cluster) string {
	var b strings.Builder
	for _, t := range c.Types {
		fmt.Fprintf(&b, "%s:%d:%g ", t.Name, t.MemMiB, t.TFLOPS)
	}
	b.WriteString("|")
	for _, n := range c.Nodes {
		fmt.Fprintf(&b, " %s:%s:%d", n.Name, c.Types[n.Type].Name, n.GPUs)
	}
	return b.String()
}

func TestParseGPUs(t *testing.T) {
	tests := []struct {
		spec    string
		perNode int
		want    string
	}{
		{"v100=8,p100=8,k80=8", 4,
			"v100:16384:15.7 p100:16384:10.6 k80:12288:4.37 | n0:v100:4 n1:v100:4 n2:p100:4 n3:p100:4 n4:k80:4 n5:k80:4"},
		{"v100=10,k80=3", 4,
			"v100:16384:15.7 k80:12288:4.37 | n0:v100:4 n1:v100:4 n2:v100:2 n3:k80:3"},
		{"t4=1", 1, "t4:16384:8.1 | n0:t4:1"},
		{" V100 = 2 , A100-80=64 ", 64,
			"v100:16384:15.7 a100-80:81920:19.5 | n0:v100:2 n1:a100-80:64"},
		{"h100=3", 2, "h100:81920:67 | n0:h100:2 n1:h100:1"},
	}
	for _, tt := range tests {
		c, err := ParseGPUs(tt.spec, tt.perNode)
		if err != nil {
			t.Errorf("ParseGPUs(%q, %d): %v", tt.spec, tt.perNode, err)
			continue
		}
		if got := describe(c); got != tt.want {
			t.Errorf("ParseGPUs(%q, %d)\n got %s\nwant %s", tt.spec, tt.perNode, got, tt.want)
		}
	}
}

func TestParseGPUsErrors(t *testing.T) {
	tests := []struct {
		spec    string
		perNode int
		want    string
	}{
		{"", 4, `--gpus: empty; want TYPE=N,..., e.g. "v100=8,p100=8"`},
		{"  ", 4, `--gpus: empty`},
		{"v100", 4, `--gpus: "v100": want TYPE=N, e.g. v100=8`},
		{"v100=8,", 4, `--gpus: "v100=8,": empty item (stray comma?)`},
		{"=8", 4, `--gpus: "=8": missing GPU type before '='`},
		{"x100=8", 4, `--gpus: "x100=8": unknown GPU type "x100" (known: a10, a100, a100-80,`},
		{"g2=8", 4, `unknown GPU type "g2"`},
		{"v100=-1", 4, `--gpus: "v100=-1": count must be a positive integer`},
		{"v100=0", 4, `--gpus: "v100=0": count must be a positive integer`},
		{"v100=", 4, `--gpus: "v100=": count must be a positive integer`},
		{"v100=2.5", 4, `--gpus: "v100=2.5": count must be a positive integer`},
		{"v100=eight", 4, `--gpus: "v100=eight": count must be a positive integer`},
		{"v100=99999999999999999999", 4, `--gpus: "v100=99999999999999999999": count must be a positive integer`},
		{"v100=4,p100=4,V100=2", 4, `--gpus: "V100=2": type v100 given twice`},
		{"v100=2000000", 4, `--gpus: "v100=2000000": cluster would have more than 1048576 GPUs`},
		{"v100=1048576,k80=1", 64, `--gpus: "k80=1": cluster would have more than 1048576 GPUs`},
		{"v100=8", 0, `--gpus-per-node: 0: must be 1..64`},
		{"v100=8", 65, `--gpus-per-node: 65: must be 1..64`},
		{"v100=8", -3, `--gpus-per-node: -3: must be 1..64`},
	}
	for _, tt := range tests {
		c, err := ParseGPUs(tt.spec, tt.perNode)
		if err == nil {
			t.Errorf("ParseGPUs(%q, %d) = %s; want error %q", tt.spec, tt.perNode, describe(c), tt.want)
			continue
		}
		if !strings.Contains(err.Error(), tt.want) {
			t.Errorf("ParseGPUs(%q, %d) error\n got %q\nwant %q", tt.spec, tt.perNode, err, tt.want)
		}
	}
}
