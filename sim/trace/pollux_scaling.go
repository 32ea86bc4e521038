package trace

import (
	"fmt"
	"slices"

	"github.com/gpusched/gpusched/core/model"
)

// polluxCache holds what one read of a Pollux workload computes once and
// shares between its jobs: the parsed profiles by application and the
// scaling curves by (application, batch size).
type polluxCache struct {
	profiles map[string]*polluxProfile
	curves   map[polluxConfig][]model.ScalePoint
}

// polluxConfig is the key of a scaling curve.
type polluxConfig struct {
	app   string
	batch int
}

// newPolluxCache returns an empty cache.
func newPolluxCache() *polluxCache {
	return &polluxCache{profiles: map[string]*polluxProfile{}, curves: map[polluxConfig][]model.ScalePoint{}}
}

// profile returns the profile of application app, loading it on first use.
func (c *polluxCache) profile(app string) (*polluxProfile, error) {
	if p := c.profiles[app]; p != nil {
		return p, nil
	}
	if _, ok := polluxApplication(app); !ok {
		return nil, fmt.Errorf("application %s is not one of %s", quote([]byte(app)), polluxAppNames)
	}
	p, err := loadPolluxProfile(app)
	if err != nil {
		return nil, err
	}
	c.profiles[app] = p
	return p, nil
}

// curve returns the scaling curve of application app (profile p) at global
// batch size batch, computing it on first use. Jobs with the same pair share
// the slice, so it must not be modified; its capacity is its length, so that
// an append copies it.
func (c *polluxCache) curve(app string, p *polluxProfile, batch int) []model.ScalePoint {
	key := polluxConfig{app, batch}
	pts, ok := c.curves[key]
	if !ok {
		pts = p.scaling(batch)
		c.curves[key] = pts
	}
	return pts
}

// scaling returns a job's speed by replica count at global batch size batch:
// for every count n from 1 to the largest replica count profiled (64 for all
// six applications), Rate(n) = 1 / duration(n, batch) — the fraction of the
// job done per second. The batch size, and with it the iteration count, is
// fixed, so only the step time changes with n. Counts for which the profile
// gives no duration (a per-GPU batch below the smallest profiled, or outside
// the measured range of that count) are left out; the job's own replica
// count, whose duration was computed, is always present. The points are
// sorted by GPU count.
func (p *polluxProfile) scaling(batch int) []model.ScalePoint {
	top := p.replicas[len(p.replicas)-1]
	var pts []model.ScalePoint
	for n := 1; n <= top; n++ {
		secs, err := p.duration(n, batch)
		if err != nil || secs <= 0 {
			continue
		}
		pts = append(pts, model.ScalePoint{GPUs: n, Rate: 1 / secs})
	}
	return slices.Clip(pts)
}
