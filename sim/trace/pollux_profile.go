package trace

import (
	"bytes"
	"cmp"
	"embed"
	"fmt"
	"slices"
	"strings"
)

// polluxProfiles holds the measured step times of the six Pollux
// applications, copied from petuum/adaptdl (branch osdi21-artifact,
// simulator/traces/<app>/{placements,scalability}.csv, Apache-2.0); see
// pollux/NOTICE.
//
//go:embed pollux/*/*.csv
var polluxProfiles embed.FS

// gpusPerNode is the node size of Pollux's testbed; a job's replicas are
// packed onto nodes of this many GPUs.
const gpusPerNode = 4

// polluxApp holds the per-application constants of Pollux's simulator
// (simulator/applications.py): the number of epochs a job trains, the
// largest per-GPU batch size (0: the largest one in placements.csv) and, for
// every validated global batch size, the number of iterations after the last
// epoch (column "iteration" of validation-<batch>.csv at row maxEpochs-1).
type polluxApp struct {
	maxEpochs   int
	maxLocalBsz int
	iterations  []iterPoint
}

// iterPoint is the iteration count of a whole job at one global batch size.
type iterPoint struct {
	batch int
	iters float64
}

// polluxApplication returns the constants of application name, or false if
// Pollux did not profile it.
func polluxApplication(name string) (polluxApp, bool) {
	switch name {
	case "bert":
		return polluxApp{maxEpochs: 2, iterations: []iterPoint{
			{12, 14774}, {24, 7427}, {48, 3732}, {96, 1885}, {192, 940}, {384, 480}}}, true
	case "cifar10":
		return polluxApp{maxEpochs: 100, iterations: []iterPoint{
			{128, 39062}, {256, 20377}, {512, 10615}, {1024, 5722}, {2048, 3178}, {4096, 2011}}}, true
	case "deepspeech2":
		return polluxApp{maxEpochs: 80, iterations: []iterPoint{
			{20, 28536}, {40, 14711}, {80, 7683}, {160, 4041}, {320, 2264}, {640, 1423}}}, true
	case "imagenet":
		return polluxApp{maxEpochs: 90, iterations: []iterPoint{
			{200, 576525}, {400, 292995}, {800, 150231}, {1600, 78453}, {3200, 42123}, {6400, 23972},
			{12800, 14461}}}, true
	case "ncf":
		return polluxApp{maxEpochs: 10, iterations: []iterPoint{
			{256, 194174}, {512, 97094}, {1024, 48625}, {2048, 24308}, {4096, 12172}, {8192, 6122},
			{16384, 3069}, {32768, 1548}}}, true
	case "yolov3":
		return polluxApp{maxEpochs: 50, maxLocalBsz: 8, iterations: []iterPoint{
			{8, 103444}, {16, 52905}, {32, 27430}, {64, 14577}, {128, 8075}, {256, 4809}, {512, 3143}}}, true
	}
	return polluxApp{}, false
}

// polluxAppNames lists the profiled applications, for messages.
const polluxAppNames = "bert, cifar10, deepspeech2, imagenet, ncf, yolov3"

// stepPoint is a measured step time (and its all-reduce part) at one
// per-GPU batch size.
type stepPoint struct {
	bsz, step, sync float64
}

// polluxProfile is one application's constants plus its step-time curves
// for packed placements, keyed by replica count.
type polluxProfile struct {
	app                polluxApp
	minLocal, maxLocal int
	curves             map[int][]stepPoint
	replicas           []int
}

// loadPolluxProfile parses the embedded CSVs of application name.
func loadPolluxProfile(name string) (*polluxProfile, error) {
	app, ok := polluxApplication(name)
	if !ok {
		return nil, fmt.Errorf("unknown application %q (want one of %s)", name, polluxAppNames)
	}
	p := &polluxProfile{app: app, curves: map[int][]stepPoint{}}
	placed, err := p.readPlacements("pollux/" + name + "/placements.csv")
	if err != nil {
		return nil, fmt.Errorf("load pollux profile %s: %w", name, err)
	}
	scaled, err := readScalability("pollux/" + name + "/scalability.csv")
	if err != nil {
		return nil, fmt.Errorf("load pollux profile %s: %w", name, err)
	}
	// Pollux looks a placement up in placements.csv first; scalability.csv
	// only fills in the replica counts that placements.csv lacks.
	for r, pts := range scaled {
		if _, ok := placed[r]; !ok {
			placed[r] = pts
		}
	}
	for r, pts := range placed {
		p.curves[r] = mergeSteps(pts)
		p.replicas = append(p.replicas, r)
	}
	slices.Sort(p.replicas)
	if app.maxLocalBsz > 0 {
		p.maxLocal = app.maxLocalBsz
	}
	if len(p.replicas) == 0 || p.minLocal < 1 || p.maxLocal < p.minLocal {
		return nil, fmt.Errorf("load pollux profile %s: no usable measurements", name)
	}
	return p, nil
}

// readPlacements reads placements.csv: it records the smallest and largest
// per-GPU batch size of all rows (Pollux's min_local_bsz, max_local_bsz) and
// returns the rows of packed placements by replica count.
func (p *polluxProfile) readPlacements(path string) (map[int][]stepPoint, error) {
	out := map[int][]stepPoint{}
	p.minLocal, p.maxLocal = -1, -1
	err := readProfileCSV(path, "placement,local_bsz,step_time,sync_time", func(l *lines, cols [][]byte) error {
		placement := bytes.TrimSpace(cols[0])
		replicas, partial := 0, 0
		for _, c := range placement {
			if c < '1' || c > '0'+gpusPerNode {
				return l.fail("placement %s is not a list of per-node GPU counts", quote(placement))
			}
			replicas += int(c - '0')
			if c != '0'+gpusPerNode {
				partial++
			}
		}
		pt, local, err := profilePoint(l, cols[1:])
		if err != nil {
			return err
		}
		if p.minLocal < 0 || local < p.minLocal {
			p.minLocal = local
		}
		p.maxLocal = max(p.maxLocal, local)
		// Packed means on as few nodes as possible: every node full except
		// at most one, wherever the ID lists it.
		if partial <= 1 && len(placement) == ceilDiv(replicas, gpusPerNode) {
			out[replicas] = append(out[replicas], pt)
		}
		return nil
	})
	return out, err
}

// readScalability reads scalability.csv and returns the rows whose node
// count is that of a packed placement, by replica count.
func readScalability(path string) (map[int][]stepPoint, error) {
	out := map[int][]stepPoint{}
	err := readProfileCSV(path, "num_nodes,num_replicas,local_bsz,step_time,sync_time", func(l *lines, cols [][]byte) error {
		nodes, err := l.integer("num_nodes", cols[0], 1, maxGPUs)
		if err != nil {
			return err
		}
		replicas, err := l.gpus("num_replicas", cols[1])
		if err != nil {
			return err
		}
		pt, _, err := profilePoint(l, cols[2:])
		if err != nil {
			return err
		}
		if int(nodes) == ceilDiv(replicas, gpusPerNode) {
			out[replicas] = append(out[replicas], pt)
		}
		return nil
	})
	return out, err
}

// readProfileCSV calls row for every line of the embedded CSV at path after
// checking its header.
func readProfileCSV(path, header string, row func(*lines, [][]byte) error) error {
	f, err := polluxProfiles.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	l := newLines(f, path)
	if err := l.header(header); err != nil {
		return err
	}
	want := strings.Count(header, ",") + 1
	var cols [][]byte
	for l.next() {
		if cols, err = l.fields(',', want, cols); err != nil {
			return err
		}
		if err := row(l, cols); err != nil {
			return err
		}
	}
	return l.err()
}

// profilePoint parses the columns local_bsz, step_time, sync_time.
func profilePoint(l *lines, cols [][]byte) (stepPoint, int, error) {
	local, err := l.integer("local_bsz", cols[0], 1, maxGPUs)
	if err != nil {
		return stepPoint{}, 0, err
	}
	step, err := l.number("step_time", cols[1], 0, maxSeconds)
	if err != nil {
		return stepPoint{}, 0, err
	}
	sync, err := l.number("sync_time", cols[2], 0, maxSeconds)
	if err != nil {
		return stepPoint{}, 0, err
	}
	return stepPoint{bsz: float64(local), step: step, sync: sync}, int(local), nil
}

// mergeSteps sorts points by batch size and averages points measured at the
// same batch size.
func mergeSteps(pts []stepPoint) []stepPoint {
	slices.SortStableFunc(pts, func(a, b stepPoint) int { return cmp.Compare(a.bsz, b.bsz) })
	var out []stepPoint
	for i := 0; i < len(pts); {
		j, sum := i, stepPoint{bsz: pts[i].bsz}
		for ; j < len(pts) && pts[j].bsz == pts[i].bsz; j++ {
			sum.step += pts[j].step
			sum.sync += pts[j].sync
		}
		n := float64(j - i)
		out = append(out, stepPoint{bsz: sum.bsz, step: sum.step / n, sync: sum.sync / n})
		i = j
	}
	return out
}

// ceilDiv returns ⌈a/b⌉ for positive a and b.
func ceilDiv(a, b int) int { return (a + b - 1) / b }
