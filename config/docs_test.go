package config

import (
	"fmt"
	"os"
	"reflect"
	"strings"
	"testing"
)

// TestGPUDocMatchesCatalog keeps docs/GPUS.md's table in step with Catalog.
func TestGPUDocMatchesCatalog(t *testing.T) {
	doc, err := os.ReadFile("../docs/GPUS.md")
	if err != nil {
		t.Fatal(err)
	}
	for _, g := range Catalog() {
		row := fmt.Sprintf("| `%s` | %d | %g |", g.Name, g.MemMiB, g.TFLOPS)
		if !strings.Contains(string(doc), row) {
			t.Errorf("docs/GPUS.md lacks the row %q", row)
		}
	}
	if n := strings.Count(string(doc), "\n| `"); n != len(Catalog()) {
		t.Errorf("docs/GPUS.md has %d type rows, catalog has %d types", n, len(Catalog()))
	}
}

// clusterDocExample returns the first YAML example of docs/CLUSTER.md after
// the line heading ("" for the first of the file).
func clusterDocExample(t *testing.T, heading string) string {
	t.Helper()
	doc, err := os.ReadFile("../docs/CLUSTER.md")
	if err != nil {
		t.Fatal(err)
	}
	_, section, ok := strings.Cut(string(doc), heading)
	_, rest, ok2 := strings.Cut(section, "```yaml\n")
	example, _, ok3 := strings.Cut(rest, "```")
	if !ok || !ok2 || !ok3 {
		t.Fatalf("docs/CLUSTER.md has no yaml example after %q", heading)
	}
	return example
}

// TestClusterDocExample parses the first YAML example of docs/CLUSTER.md.
func TestClusterDocExample(t *testing.T) {
	example := clusterDocExample(t, "")
	c, err := ParseClusterFile("CLUSTER.md", []byte(example))
	if err != nil {
		t.Fatal(err)
	}
	want := "v100:32768:15.7 k80:12288:4.37 p40:24576:12 | " +
		"rack1-0:v100:8 rack1-1:v100:8 rack1-2:v100:8 rack1-3:v100:8 old-box:k80:8 inference:p40:8"
	if got := describe(c); got != want {
		t.Errorf("doc example:\n got %s\nwant %s", got, want)
	}
}

// TestClusterDocResourcesExample parses the example of docs/CLUSTER.md's
// resources section and checks the capacity it gives.
func TestClusterDocResourcesExample(t *testing.T) {
	example := clusterDocExample(t, "\n## CPU, memory and other resources\n")
	c, err := ParseClusterFile("CLUSTER.md", []byte(example))
	if err != nil {
		t.Fatal(err)
	}
	g2 := "cpu=96,ephemeral-storage=1Ti,memory=384Gi,pods=110,rdma/hca=4"
	want := "g2-0:" + g2 + " g2-1:" + g2 + " g2-2:" + g2 + " g2-3:" + g2 + " t4:cpu=104,memory=512Gi,pods=110"
	if got := describeCapacity(c); got != want {
		t.Errorf("doc example:\n got %s\nwant %s", got, want)
	}
}

// TestClusterDocNodeKeys: every key of a nodes entry has a row in
// docs/CLUSTER.md's nodes table.
func TestClusterDocNodeKeys(t *testing.T) {
	doc, err := os.ReadFile("../docs/CLUSTER.md")
	if err != nil {
		t.Fatal(err)
	}
	fields := map[string]reflect.Type{}
	structFields(reflect.TypeFor[NodeSpec](), fields)
	for key := range fields {
		if !strings.Contains(string(doc), "| `"+key+"`") && !strings.Contains(string(doc), "(or `"+key+"`)") {
			t.Errorf("docs/CLUSTER.md has no row for the nodes key %q", key)
		}
	}
}
