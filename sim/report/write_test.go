package report

import (
	"bytes"
	"errors"
	"fmt"
	"image/png"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/gpusched/gpusched/core/model"
	"github.com/gpusched/gpusched/sim/metrics"
)

// benchSamples returns n change points over about n minutes on a cluster of
// gpus GPUs, from a fixed seed.
func benchSamples(n, gpus int) []metrics.Sample {
	r := rand.New(rand.NewPCG(1, 2))
	samples := make([]metrics.Sample, n)
	var t model.Time
	busy, queued := 0, 0
	for i := range samples {
		busy = max(0, min(gpus, busy+r.IntN(9)-4))
		queued = max(0, queued+r.IntN(5)-2)
		samples[i] = metrics.Sample{T: t, BusyGPUs: busy, Queued: queued, PowerW: 1000 + 300*float64(busy)}
		t += model.Time(r.IntN(120_000))
	}
	return samples
}

// benchRecords returns n job records, about one in ten unfinished and one
// in fifty rejected, from a fixed seed.
func benchRecords(n int) []metrics.JobRecord {
	r := rand.New(rand.NewPCG(3, 4))
	recs := make([]metrics.JobRecord, n)
	for i := range recs {
		submit := model.Time(i) * 30 * model.Second
		start := submit + model.Time(r.IntN(3_600_000))
		finish := start + model.Time(r.ExpFloat64()*3_600_000) + model.Second
		rec := metrics.JobRecord{ID: fmt.Sprintf("j%d", i), Submit: submit, Start: start,
			Finish: finish, GPUs: 1 << r.IntN(4), GPUType: "v100", Preemptions: r.IntN(3)}
		switch r.IntN(50) {
		case 0:
			rec.Start, rec.Finish, rec.GPUs, rec.GPUType, rec.Rejected = -1, -1, 0, "", true
		case 1, 2, 3, 4, 5:
			rec.Finish = -1
		}
		recs[i] = rec
	}
	return recs
}

// reportFiles are the files of a complete report.
func reportFiles() []string {
	return []string{GPUUtilFile, IndexFile, JCTCDFFile, JobsFile, PowerFile, QueueFile, SummaryFile}
}

// dirNames returns the sorted names in dir.
func dirNames(t *testing.T, dir string) []string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	slices.Sort(names)
	return names
}

func TestWrite(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "a", "report")
	recs := benchRecords(3000)
	samples := benchSamples(10_000, 64)
	s := metrics.Summarize(64, recs)
	energy := 1234.5
	s.EnergyKWh = &energy
	if err := Write(dir, s, recs, samples, 64); err != nil {
		t.Fatal(err)
	}
	if got, want := dirNames(t, dir), reportFiles(); !slices.Equal(got, want) {
		t.Fatalf("files %v, want %v", got, want)
	}
	for _, name := range []string{JCTCDFFile, GPUUtilFile, QueueFile, PowerFile} {
		f, err := os.Open(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		img, err := png.Decode(f)
		f.Close()
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if b := img.Bounds(); b.Dx() < 400 || b.Dx() > 2000 || b.Dy() < 250 || b.Dy() > 1500 {
			t.Errorf("%s: size %v", name, b.Size())
		}
	}
	var want bytes.Buffer
	if err := JobsCSV(&want, recs, true); err != nil {
		t.Fatal(err)
	}
	if got, err := os.ReadFile(filepath.Join(dir, JobsFile)); err != nil || !bytes.Equal(got, want.Bytes()) {
		t.Errorf("jobs.csv differs from JobsCSV (err %v)", err)
	}
	info, err := os.Stat(filepath.Join(dir, SummaryFile))
	if err != nil || info.Mode().Perm() != 0o644 {
		t.Errorf("summary.json: %v, mode %v", err, info.Mode())
	}
}

// TestWriteEmpty checks that a run with no jobs and no samples still gives
// a complete report.
func TestWriteEmpty(t *testing.T) {
	dir := t.TempDir()
	if err := Write(dir, metrics.Summary{}, nil, nil, 8); err != nil {
		t.Fatal(err)
	}
	if got, want := dirNames(t, dir), reportFiles(); !slices.Equal(got, want) {
		t.Fatalf("files %v, want %v", got, want)
	}
}

func TestWriteDeterministic(t *testing.T) {
	recs := benchRecords(500)
	samples := benchSamples(5000, 16)
	s := metrics.Summarize(16, recs)
	a, b := t.TempDir(), t.TempDir()
	for _, dir := range []string{a, b} {
		if err := Write(dir, s, recs, samples, 16); err != nil {
			t.Fatal(err)
		}
	}
	for _, name := range reportFiles() {
		x, errX := os.ReadFile(filepath.Join(a, name))
		y, errY := os.ReadFile(filepath.Join(b, name))
		if errX != nil || errY != nil || !bytes.Equal(x, y) {
			t.Errorf("%s differs between two writes (%v, %v)", name, errX, errY)
		}
	}
}

func TestWriteErrorLeavesNothing(t *testing.T) {
	root := t.TempDir()
	file := filepath.Join(root, "file")
	if err := os.WriteFile(file, []byte("keep"), 0o644); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		dir  string
		gpus int
	}{
		{"dir is a file", file, 8},
		{"under a file", filepath.Join(file, "sub"), 8},
		{"no GPUs", filepath.Join(root, "new"), 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if err := Write(tt.dir, metrics.Summary{}, nil, nil, tt.gpus); err == nil {
				t.Fatal("Write succeeded")
			}
			if got := dirNames(t, root); !slices.Equal(got, []string{"file"}) {
				t.Errorf("left %v behind", got)
			}
			if b, _ := os.ReadFile(file); string(b) != "keep" {
				t.Errorf("file now holds %q", b)
			}
		})
	}
}

// TestWriteAllRollsBack checks that a failure after some files were written
// removes them and the directories that were created for them.
func TestWriteAllRollsBack(t *testing.T) {
	root := t.TempDir()
	dir := filepath.Join(root, "x", "y")
	boom := errors.New("boom")
	ok := func(w io.Writer) error { _, err := io.WriteString(w, "data"); return err }
	outputs := []output{{"a", ok}, {"b", ok}, {"c", func(io.Writer) error { return boom }}, {"d", ok}}
	if err := writeAll(dir, outputs); !errors.Is(err, boom) {
		t.Fatalf("writeAll = %v, want %v", err, boom)
	}
	if got := dirNames(t, root); len(got) != 0 {
		t.Errorf("left %v behind", got)
	}
	// In an existing directory, only what writeAll created goes.
	if err := os.WriteFile(filepath.Join(root, "a"), []byte("old"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := writeAll(root, outputs); !errors.Is(err, boom) {
		t.Fatalf("writeAll = %v, want %v", err, boom)
	}
	if got := dirNames(t, root); !slices.Equal(got, []string{"a"}) {
		t.Errorf("directory holds %v, want [a]", got)
	}
	if b, _ := os.ReadFile(filepath.Join(root, "a")); string(b) != "old" {
		t.Errorf("a now holds %q, want old", b)
	}
}

func BenchmarkWrite(b *testing.B) {
	recs := benchRecords(80_000)
	samples := benchSamples(100_000, 256)
	s := metrics.Summarize(256, recs)
	dir := b.TempDir()
	b.ResetTimer()
	for b.Loop() {
		if err := Write(dir, s, recs, samples, 256); err != nil {
			b.Fatal(err)
		}
	}
}
