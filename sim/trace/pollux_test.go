package trace

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/gpusched/gpusched/core/model"
)

// polluxJobSpec is a Pollux job as Read returns it; its scaling curve is
// checked by TestPolluxScaling.
func polluxJobSpec(t *testing.T, id string, submit model.Time, gpus int, app string, batch int, secs float64) model.JobSpec {
	t.Helper()
	s := rigid(id, submit, gpus)
	s.Model, s.Duration = app, model.FromSeconds(secs)
	p, err := loadPolluxProfile(app)
	if err != nil {
		t.Fatal(err)
	}
	s.Scaling = p.scaling(batch)
	return s
}

// lerp interpolates linearly from a (at x0) to b (at x1) at x.
func lerp(x, x0, x1, a, b float64) float64 { return a + (x-x0)/(x1-x0)*(b-a) }

func TestReadPollux(t *testing.T) {
	const h = polluxHeader + "\n"
	// Expected durations, from the rows of the embedded CSVs written out:
	// cifar10, 6 replicas ("24"), batch 2048: 342 per GPU, 3178 iterations.
	cifar6 := 3178 * lerp(342, 257, 363, 0.23076505661010743, 0.27816870212554934)
	// cifar10, 6 replicas, batch 3072: 512 per GPU; iterations halfway
	// between 3178 (2048) and 2011 (4096).
	cifar6b := lerp(3072, 2048, 4096, 3178, 2011) * lerp(512, 363, 513, 0.27816870212554934, 0.409974479675293)
	// cifar10, 20 replicas, batch 4096: 205 per GPU, halfway between the
	// curves of 16 ("4444") and 24 (scalability.csv, 6 nodes) replicas.
	at16 := lerp(205, 182, 257, 0.17696428298950195, 0.224122953414917)
	at24 := lerp(205, 182, 257, 0.22637147903442384, 0.25570971625191824)
	cifar20 := 2011 * (at16 + at24) / 2
	// yolov3, 4 replicas, batch 64: 16 per GPU > 8 (yolov3's max), so one
	// accumulation step at 8 per GPU.
	yoloStep, yoloSync := 0.5009251087903976, 0.11896183347702027
	yolo4 := 14577 * (yoloStep + (yoloStep - yoloSync))
	// ncf, 1 replica, batch 32768.
	ncf1 := 1548 * 0.02131553226047092
	runReadCases(t, "w.csv", "pollux", []readCase{
		{name: "durations",
			in: h + "cifar10-0,107,cifar10,6,2048\nyolo,100.5,yolov3,4,64\nncf-2,135,ncf,1,32768\n" +
				"c20,135,cifar10,20,4096\nc6b,0,cifar10,6,3072\n",
			want: []model.JobSpec{
				polluxJobSpec(t, "c6b", 0, 6, "cifar10", 3072, cifar6b),
				polluxJobSpec(t, "yolo", 100500, 4, "yolov3", 64, yolo4),
				polluxJobSpec(t, "cifar10-0", 107*model.Second, 6, "cifar10", 2048, cifar6),
				polluxJobSpec(t, "ncf-2", 135*model.Second, 1, "ncf", 32768, ncf1),
				polluxJobSpec(t, "c20", 135*model.Second, 20, "cifar10", 4096, cifar20),
			}},
		{name: "missing header", in: "cifar10-0,107,cifar10,6,2048\n", err: `w.csv:1: missing header: want "name,time,`},
		{name: "four columns", in: h + "a,1,cifar10,6\n", err: "w.csv:2: got 4 columns, want 5"},
		{name: "empty name", in: h + ",1,cifar10,6,2048\n", err: "w.csv:2: name is empty"},
		{name: "duplicate name", in: h + "a,1,cifar10,6,2048\na,1,cifar10,6,2048\n", err: `w.csv:3: duplicate id "a" (first on line 2)`},
		{name: "negative time", in: h + "a,-1,cifar10,6,2048\n", err: "w.csv:2: time -1 is negative"},
		{name: "unknown application", in: h + "a,1,gpt3,6,2048\n", err: `w.csv:2: application "gpt3" is not one of bert, cifar10,`},
		{name: "zero replicas", in: h + "a,1,cifar10,0,2048\n", err: "w.csv:2: num_replicas 0 is less than 1"},
		{name: "batch text", in: h + "a,1,cifar10,6,big\n", err: `w.csv:2: batch_size "big" is not an integer`},
		{name: "zero batch", in: h + "a,1,cifar10,6,0\n", err: "w.csv:2: batch_size 0 is less than 1"},
		{name: "per-GPU batch too small", in: h + "a,1,cifar10,6,100\n",
			err: "w.csv:2: cifar10: batch_size 100 on 6 replicas is 17 per GPU, less than the smallest profiled 32"},
		{name: "batch beyond validation", in: h + "a,1,cifar10,1,8192\n",
			err: "w.csv:2: cifar10: batch_size 8192 is outside the validated 128 to 4096"},
		{name: "too many replicas", in: h + "a,1,cifar10,65,4096\n",
			err: "w.csv:2: cifar10: no step time measured near 65 replicas (profiled 1 to 64)"},
		{name: "header only", in: h, err: "w.csv: no jobs in the trace"},
	})
}

// TestPolluxProfiles loads every embedded profile and checks the replica
// counts it covers.
func TestPolluxProfiles(t *testing.T) {
	for _, app := range []string{"bert", "cifar10", "deepspeech2", "imagenet", "ncf", "yolov3"} {
		p, err := loadPolluxProfile(app)
		if err != nil {
			t.Fatal(err)
		}
		for r := 1; r <= 16; r++ {
			if _, ok := p.curves[r]; !ok {
				t.Errorf("%s: no curve for %d packed replicas in placements.csv", app, r)
			}
		}
		for _, r := range []int{24, 32, 48, 64} {
			if _, ok := p.curves[r]; !ok {
				t.Errorf("%s: no curve for %d replicas from scalability.csv", app, r)
			}
		}
		if got := p.replicas[len(p.replicas)-1]; got != 64 {
			t.Errorf("%s: most replicas %d, want 64", app, got)
		}
	}
	p, err := loadPolluxProfile("cifar10")
	if err != nil {
		t.Fatal(err)
	}
	// 6 replicas packed is placement "24" only (not "33", "222", …): its 11
	// rows, the first being "24,32,0.1585538864135742,0.11687971038818361".
	if c := p.curves[6]; len(c) != 11 || c[0] != (stepPoint{32, 0.1585538864135742, 0.11687971038818361}) {
		t.Errorf("cifar10 curve for 6 replicas = %v", c)
	}
	if p.minLocal != 32 || p.maxLocal != 1024 {
		t.Errorf("cifar10 local batch bounds %d, %d; want 32, 1024", p.minLocal, p.maxLocal)
	}
	if _, err := loadPolluxProfile("gpt3"); err == nil {
		t.Error("loaded a profile for an unknown application")
	}
}

func TestMergeSteps(t *testing.T) {
	got := mergeSteps([]stepPoint{{8, 3, 1}, {4, 1, 0}, {8, 5, 3}})
	want := []stepPoint{{4, 1, 0}, {8, 4, 2}}
	if len(got) != len(want) || got[0] != want[0] || got[1] != want[1] {
		t.Errorf("mergeSteps = %v, want %v", got, want)
	}
}

// TestPolluxWorkloadConfigs pins the duration of every (application,
// replicas, batch size) that the eight Pollux workloads use; docs/TRACES.md
// lists the same numbers.
func TestPolluxWorkloadConfigs(t *testing.T) {
	for _, tc := range []struct {
		app             string
		replicas, batch int
		want            model.Time
	}{
		{"bert", 6, 384, 3055742},
		{"bert", 8, 384, 2480291},
		{"bert", 12, 384, 1589204},
		{"bert", 16, 384, 1334895},
		{"cifar10", 6, 2048, 854175},
		{"cifar10", 8, 2048, 826065},
		{"cifar10", 12, 4096, 573181},
		{"cifar10", 16, 4096, 449447},
		{"deepspeech2", 6, 320, 4153243},
		{"deepspeech2", 8, 320, 3500849},
		{"deepspeech2", 12, 640, 2572668},
		{"imagenet", 24, 3200, 31395626},
		{"imagenet", 32, 6400, 26207431},
		{"imagenet", 48, 6400, 18879603},
		{"ncf", 1, 32768, 32996},
		{"yolov3", 4, 64, 12869864},
	} {
		p, err := loadPolluxProfile(tc.app)
		if err != nil {
			t.Fatal(err)
		}
		secs, err := p.duration(tc.replicas, tc.batch)
		if err != nil {
			t.Fatalf("%s %d×%d: %v", tc.app, tc.replicas, tc.batch, err)
		}
		if got := model.FromSeconds(secs); got != tc.want {
			t.Errorf("%s on %d replicas, batch %d: %v s, want %v s", tc.app, tc.replicas, tc.batch,
				got.SecondsString(), tc.want.SecondsString())
		}
	}
}

// TestPolluxScaling checks scaling curves against step times written out
// from the embedded CSVs, and that they are sublinear at the job's size.
func TestPolluxScaling(t *testing.T) {
	// bert, batch 384 (480 iterations): 8 replicas ("44") is 48 per GPU, 3
	// accumulation steps at 12; 16 ("4444") is 24 per GPU, 1 step at 12.
	bert8 := 480 * (2.538950562477112 + 3*(2.538950562477112-1.6628430938720702))
	bert16 := 480 * (1.8881946355104446 + (1.8881946355104446 - 0.9953583183288576))
	// cifar10, batch 2048 (3178 iterations): 6 replicas as in
	// TestReadPollux; 12 ("444") is 171 per GPU.
	cifar6 := 3178 * lerp(342, 257, 363, 0.23076505661010743, 0.27816870212554934)
	cifar12 := 3178 * lerp(171, 129, 182, 0.17085661888122558, 0.19440717697143556)
	// yolov3, batch 64 (14577 iterations): 4 replicas as in TestReadPollux;
	// 2 ("2") is 32 per GPU, 3 accumulation steps at 8. From 22 replicas on,
	// ⌈64/22⌉ = 3 per GPU is below the smallest profiled 4.
	yolo4 := 14577 * (0.5009251087903976 + (0.5009251087903976 - 0.11896183347702027))
	yolo2 := 14577 * (0.3566535413265228 + 3*(0.3566535413265228-0.03225891834497452))
	for _, tc := range []struct {
		app                 string
		batch, replicas     int
		secs                float64 // duration at replicas
		other               int
		otherSecs           float64 // duration at other
		first, last, points int
	}{
		{"bert", 384, 8, bert8, 16, bert16, 1, 64, 64},
		{"cifar10", 2048, 6, cifar6, 12, cifar12, 1, 64, 64},
		{"yolov3", 64, 4, yolo4, 2, yolo2, 1, 21, 21},
	} {
		p, err := loadPolluxProfile(tc.app)
		if err != nil {
			t.Fatal(err)
		}
		pts := p.scaling(tc.batch)
		name := fmt.Sprintf("%s batch %d", tc.app, tc.batch)
		if msg := curveInvariant(pts); msg != "" {
			t.Fatalf("%s: %s", name, msg)
		}
		if len(pts) != tc.points || pts[0].GPUs != tc.first || pts[len(pts)-1].GPUs != tc.last {
			t.Errorf("%s: %d points from %d to %d GPUs, want %d from %d to %d", name, len(pts),
				pts[0].GPUs, pts[len(pts)-1].GPUs, tc.points, tc.first, tc.last)
		}
		// The job's own point is exactly 1/duration.
		secs, err := p.duration(tc.replicas, tc.batch)
		if err != nil {
			t.Fatal(err)
		}
		if got := curveAt(pts, tc.replicas); got != 1/secs {
			t.Errorf("%s: rate at %d = %v, want 1/duration = %v", name, tc.replicas, got, 1/secs)
		}
		for _, c := range []struct {
			n    int
			secs float64
		}{{tc.replicas, tc.secs}, {tc.other, tc.otherSecs}} {
			if got := curveAt(pts, c.n); math.Abs(got*c.secs-1) > 1e-12 {
				t.Errorf("%s: rate at %d = %v, want 1/%v", name, c.n, got, c.secs)
			}
		}
		if r := curveAt(pts, 2*tc.replicas) / curveAt(pts, tc.replicas); !(r > 0 && r < 2) {
			t.Errorf("%s: rate(%d)/rate(%d) = %v, want sublinear (0, 2)", name, 2*tc.replicas, tc.replicas, r)
		}
	}
}

// curveAt returns the rate measured at n GPUs, or 0 when the curve lacks n.
func curveAt(pts []model.ScalePoint, n int) float64 {
	for _, p := range pts {
		if p.GPUs == n {
			return p.Rate
		}
	}
	return 0
}

// TestPolluxScalingWorkload reads the committed sample workload twice: the
// jobs must be identical, each curve must hold the job's own point, and jobs
// of the same application and batch size must share one read-only curve.
func TestPolluxScalingWorkload(t *testing.T) {
	read := func() []model.JobSpec {
		f, err := os.Open(filepath.Join(samples, "pollux/workload-6.csv"))
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		jobs, err := Read(f, "workload-6.csv", "pollux")
		if err != nil {
			t.Fatal(err)
		}
		return jobs
	}
	jobs := read()
	if again := read(); !reflect.DeepEqual(jobs, again) {
		t.Error("reading the workload twice gave different jobs")
	}
	if msg := scalingInvariant(jobs); msg != "" {
		t.Fatal(msg)
	}
	byCurve := map[*model.ScalePoint]string{}
	for _, j := range jobs {
		if r := curveAt(j.Scaling, j.GPUs); model.FromSeconds(1/r) != j.Duration {
			t.Errorf("job %s: 1/rate at %d GPUs = %v s, duration %v s", j.ID, j.GPUs, 1/r, j.Duration.SecondsString())
		}
		if cap(j.Scaling) != len(j.Scaling) {
			t.Errorf("job %s: curve capacity %d > length %d: an append would write into a shared curve",
				j.ID, cap(j.Scaling), len(j.Scaling))
		}
		byCurve[&j.Scaling[0]] = j.Model
	}
	// workload-6.csv uses few distinct (application, batch size) pairs.
	if len(byCurve) >= len(jobs) {
		t.Errorf("%d jobs have %d distinct curves; want them shared", len(jobs), len(byCurve))
	}
}
