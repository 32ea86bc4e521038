package profile

import (
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/gpusched/gpusched/core/model"
)

// Point is one measured throughput: steps per second on GPUs GPUs.
type Point struct {
	GPUs int
	Rate float64
}

// Matrix is a parsed throughput matrix: for every (job type, GPU type) the
// measured points, sorted by GPU count.
type Matrix struct {
	// Types are the GPU types, sorted.
	Types []string
	// Models are the job types, sorted.
	Models []string
	points map[string]map[string][]Point // model -> GPU type -> points
	peak   map[string]int                // model -> peak memory per GPU (MiB)
}

type entry struct {
	Null *float64 `json:"null"`
}

// ParseMatrix parses a throughput matrix in Gavel's JSON format. name is used
// in error messages only.
func ParseMatrix(name string, data []byte) (*Matrix, error) {
	var raw map[string]map[string]entry
	if err := json.Unmarshal(data, &raw); err != nil {
		return nil, fmt.Errorf("%s: not a throughput matrix: %w", name, err)
	}
	m := &Matrix{points: map[string]map[string][]Point{}}
	for gpuType, jobs := range raw {
		gpuType = strings.ToLower(gpuType)
		m.Types = append(m.Types, gpuType)
		for key, e := range jobs {
			model, n, err := parseKey(key)
			if err != nil {
				return nil, fmt.Errorf("%s: %s: %w", name, gpuType, err)
			}
			if e.Null == nil {
				return nil, fmt.Errorf("%s: %s: %s: no \"null\" entry", name, gpuType, key)
			}
			if *e.Null < 0 {
				return nil, fmt.Errorf("%s: %s: %s: negative throughput %g", name, gpuType, key, *e.Null)
			}
			byType := m.points[model]
			if byType == nil {
				byType = map[string][]Point{}
				m.points[model] = byType
				m.Models = append(m.Models, model)
			}
			byType[gpuType] = append(byType[gpuType], Point{GPUs: n, Rate: *e.Null})
		}
	}
	if len(m.Models) == 0 {
		return nil, fmt.Errorf("%s: throughput matrix has no entries", name)
	}
	slices.Sort(m.Types)
	slices.Sort(m.Models)
	for _, byType := range m.points {
		for t, pts := range byType {
			slices.SortFunc(pts, func(a, b Point) int { return a.GPUs - b.GPUs })
			for i := 1; i < len(pts); i++ {
				if pts[i].GPUs == pts[i-1].GPUs {
					return nil, fmt.Errorf("%s: %s: GPU count %d given twice", name, t, pts[i].GPUs)
				}
			}
		}
	}
	return m, nil
}

// parseKey splits Gavel's "('ResNet-50 (batch size 64)', 4)" into the job
// type and the GPU count.
func parseKey(key string) (string, int, error) {
	s, ok := strings.CutPrefix(key, "('")
	if ok {
		s, ok = strings.CutSuffix(s, ")")
	}
	i := strings.LastIndex(s, "', ")
	if !ok || i < 0 {
		return "", 0, fmt.Errorf("key %q: want ('<job type>', <GPU count>)", key)
	}
	n, err := strconv.Atoi(s[i+3:])
	if err != nil || n < 1 {
		return "", 0, fmt.Errorf("key %q: GPU count must be a positive integer", key)
	}
	if s[:i] == "" {
		return "", 0, fmt.Errorf("key %q: empty job type", key)
	}
	return s[:i], n, nil
}

// Points returns the measured points of a job type on a GPU type (nil when
// the matrix has none).
func (m *Matrix) Points(model, gpuType string) []Point { return m.points[model][gpuType] }

// HasModel reports whether the matrix knows the job type.
func (m *Matrix) HasModel(model string) bool { return m.points[model] != nil }

// HasType reports whether the matrix has measurements for the GPU type.
func (m *Matrix) HasType(gpuType string) bool {
	_, ok := slices.BinarySearch(m.Types, gpuType)
	return ok
}

// Rate returns the throughput at n GPUs from sorted points: exact where
// measured, interpolated between measured counts but never above linear
// scaling from the count below, linear beyond the largest count. 0 when the
// job cannot run (no data, or a zero entry at or around n).
func Rate(pts []Point, n int) float64 { return interpolate(pts, n, false) }

// ScaleRate returns a job's speed at n GPUs from its measured scaling curve
// (model.JobSpec.Scaling, sorted by GPU count) like Rate, except beyond the
// largest measured count: there it stays at the largest count's rate (a job
// cannot speed up past what was measured) instead of growing linearly.
func ScaleRate(pts []model.ScalePoint, n int) float64 { return interpolate(pts, n, true) }

// xy is the shape shared by Point and model.ScalePoint.
type xy = struct {
	GPUs int
	Rate float64
}

// interpolate implements Rate and ScaleRate for either point type without
// copying the points; capped selects ScaleRate's rule beyond the largest
// count.
func interpolate[P ~xy](pts []P, n int, capped bool) float64 {
	if n < 1 || len(pts) == 0 {
		return 0
	}
	// i is the first point with at least n GPUs.
	i, j := 0, len(pts)
	for i < j {
		h := int(uint(i+j) >> 1)
		if xy(pts[h]).GPUs < n {
			i = h + 1
		} else {
			j = h
		}
	}
	if i < len(pts) && xy(pts[i]).GPUs == n {
		return xy(pts[i]).Rate
	}
	if i == 0 {
		// Below the smallest measured count: scale down linearly.
		first := xy(pts[0])
		return first.Rate * float64(n) / float64(first.GPUs)
	}
	lo := xy(pts[i-1])
	linear := lo.Rate * float64(n) / float64(lo.GPUs)
	if i == len(pts) {
		if capped {
			return lo.Rate
		}
		return linear
	}
	hi := xy(pts[i])
	if lo.Rate == 0 || hi.Rate == 0 {
		return 0
	}
	r := lo.Rate + (hi.Rate-lo.Rate)*float64(n-lo.GPUs)/float64(hi.GPUs-lo.GPUs)
	return min(r, linear)
}
