package profile

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"
)

// Profile is a user-supplied profile of one job type (docs/PROFILES.md):
// its measured throughput per GPU type and GPU count, and its peak memory per
// GPU. It replaces or extends the throughput matrix's entries for the job
// type (Matrix.Merge).
type Profile struct {
	// JobType names the job type, compared exactly (case included) with a
	// job's model and the matrix's job types.
	JobType string
	// PeakMemMiB is the peak memory per GPU in MiB; 0 means unknown.
	PeakMemMiB int
	// Throughput maps a GPU type (lower case) to its measured points, sorted
	// by GPU count, each count at most once, each rate >= 0 (0: the job
	// cannot run there). May be empty when the profile gives only memory.
	Throughput map[string][]Point
}

// MaxPeakMemMiB bounds a profile's peak memory per GPU (as the jsonl trace
// format bounds peak_mem_mib).
const MaxPeakMemMiB = math.MaxInt32

// ParseProfiles decodes a profile file in its JSON form:
//
//	{"profiles": [{"job_type": "my-bert-large", "peak_mem_mib": 22000,
//	  "throughput": {"a100": {"1": 3.1, "2": 6.0}, "t4": {"1": 0}}}]}
//
// Profile files are written in YAML; the shell converts YAML to JSON first
// (sigs.k8s.io/yaml.YAMLToJSONStrict), which keeps this package free of
// third-party code. Decoding is strict: unknown fields, duplicate keys, a
// repeated job type, GPU type or GPU count, values of the wrong kind and
// negative throughputs are errors that name the entry, e.g.
// `NAME: profiles[1].throughput.v100: GPU count "x" is not a positive
// integer`. GPU type names are lower-cased. name is used only in error
// messages.
func ParseProfiles(name string, data []byte) ([]Profile, error) {
	d := &decoder{name: name, dec: json.NewDecoder(strings.NewReader(string(data)))}
	d.dec.UseNumber()
	var ps []Profile
	found := false
	err := d.object("", `an object with a "profiles" list`, func(key string) error {
		if key != "profiles" {
			return d.fail("", "unknown field %q (known: profiles)", key)
		}
		found = true
		var err error
		ps, err = d.profiles("profiles")
		return err
	})
	if err != nil {
		return nil, err
	}
	if _, err := d.dec.Token(); !errors.Is(err, io.EOF) {
		return nil, d.fail("", "unexpected data after the top-level object")
	}
	if !found {
		return nil, d.fail("profiles", "required")
	}
	if len(ps) == 0 {
		return nil, d.fail("profiles", "no profiles")
	}
	return ps, nil
}

// decoder walks a profile file's JSON tokens along the file's schema, so
// that every error can name the entry it is about.
type decoder struct {
	name string
	dec  *json.Decoder
}

// fail returns an error about the value at path ("" for the whole file).
func (d *decoder) fail(path, format string, a ...any) error {
	if path == "" {
		return fmt.Errorf("%s: %s", d.name, fmt.Sprintf(format, a...))
	}
	return fmt.Errorf("%s: %s: %s", d.name, path, fmt.Sprintf(format, a...))
}

// token returns the next token; a syntax error or an early end is an error.
func (d *decoder) token() (json.Token, error) {
	tok, err := d.dec.Token()
	if errors.Is(err, io.EOF) {
		err = io.ErrUnexpectedEOF
	}
	if err != nil {
		return nil, fmt.Errorf("%s: %w", d.name, err)
	}
	return tok, nil
}

// kind describes a token for error messages.
func kind(tok json.Token) string {
	switch v := tok.(type) {
	case json.Delim:
		if v == '[' {
			return "a list"
		}
		return "an object"
	case string:
		return fmt.Sprintf("the string %q", v)
	case json.Number:
		return "the number " + v.String()
	case bool:
		return "a boolean"
	}
	return "null"
}

// object reads the object at path, calling member for each key in order; a
// key given twice is an error. want describes the expected value.
func (d *decoder) object(path, want string, member func(key string) error) error {
	tok, err := d.token()
	if err != nil {
		return err
	}
	if tok != json.Delim('{') {
		return d.fail(path, "want %s, got %s", want, kind(tok))
	}
	seen := map[string]bool{}
	for d.dec.More() {
		tok, err := d.token()
		if err != nil {
			return err
		}
		key, _ := tok.(string) // the decoder only lets strings be keys
		if seen[key] {
			return d.fail(path, "key %q given twice", key)
		}
		seen[key] = true
		if err := member(key); err != nil {
			return err
		}
	}
	_, err = d.token() // the closing brace, or a syntax error
	return err
}

// profiles reads the list of profiles at path.
func (d *decoder) profiles(path string) ([]Profile, error) {
	tok, err := d.token()
	if err != nil {
		return nil, err
	}
	if tok != json.Delim('[') {
		return nil, d.fail(path, "want a list of profiles, got %s", kind(tok))
	}
	ps := []Profile{}
	first := map[string]int{} // job type -> index of its profile
	for i := 0; d.dec.More(); i++ {
		at := fmt.Sprintf("%s[%d]", path, i)
		p, err := d.profile(at)
		if err != nil {
			return nil, err
		}
		if j, ok := first[p.JobType]; ok {
			return nil, d.fail(at+".job_type", "%q already given in %s[%d]", p.JobType, path, j)
		}
		first[p.JobType] = i
		ps = append(ps, p)
	}
	_, err = d.token()
	return ps, err
}

// profile reads one profile at path.
func (d *decoder) profile(path string) (Profile, error) {
	p := Profile{Throughput: map[string][]Point{}}
	found := false
	err := d.object(path, "an object (job_type, peak_mem_mib, throughput)", func(key string) error {
		var err error
		switch key {
		case "job_type":
			found = true
			p.JobType, err = d.jobType(path + ".job_type")
		case "peak_mem_mib":
			p.PeakMemMiB, err = d.peakMem(path + ".peak_mem_mib")
		case "throughput":
			p.Throughput, err = d.throughput(path + ".throughput")
		default:
			err = d.fail(path, "unknown field %q (known: job_type, peak_mem_mib, throughput)", key)
		}
		return err
	})
	switch {
	case err != nil:
		return Profile{}, err
	case !found:
		return Profile{}, d.fail(path+".job_type", "required")
	case len(p.Throughput) == 0 && p.PeakMemMiB == 0:
		return Profile{}, d.fail(path, "give throughput, peak_mem_mib or both")
	}
	return p, nil
}

// jobType reads a non-empty string.
func (d *decoder) jobType(path string) (string, error) {
	tok, err := d.token()
	if err != nil {
		return "", err
	}
	s, ok := tok.(string)
	if !ok {
		return "", d.fail(path, "want a string, got %s", kind(tok))
	}
	if strings.TrimSpace(s) == "" {
		return "", d.fail(path, "empty job type")
	}
	return s, nil
}

// peakMem reads an integer in 0..MaxPeakMemMiB.
func (d *decoder) peakMem(path string) (int, error) {
	tok, err := d.token()
	if err != nil {
		return 0, err
	}
	num, _ := tok.(json.Number)
	n, err := strconv.ParseInt(num.String(), 10, 64)
	if err != nil || n < 0 || n > MaxPeakMemMiB {
		return 0, d.fail(path, "want an integer number of MiB in 0..%d, got %s", MaxPeakMemMiB, kind(tok))
	}
	return int(n), nil
}

// throughput reads the map from GPU type to points at path.
func (d *decoder) throughput(path string) (map[string][]Point, error) {
	byType := map[string][]Point{}
	raw := map[string]string{} // lower-case name -> name as written
	err := d.object(path, "an object mapping GPU types to {GPU count: steps/s}", func(key string) error {
		at := path + "." + key
		gpuType := strings.ToLower(key)
		if strings.TrimSpace(gpuType) == "" {
			return d.fail(path, "empty GPU type name")
		}
		if prev, ok := raw[gpuType]; ok {
			return d.fail(at, "GPU type already given as %q (names are compared without regard to case)", prev)
		}
		raw[gpuType] = key
		pts, err := d.points(at)
		byType[gpuType] = pts
		return err
	})
	if err != nil {
		return nil, err
	}
	return byType, nil
}

// points reads one GPU type's {GPU count: steps/s} object at path and
// returns its points sorted by GPU count.
func (d *decoder) points(path string) ([]Point, error) {
	var pts []Point
	err := d.object(path, "an object mapping GPU counts to steps/s", func(key string) error {
		n, err := strconv.Atoi(key)
		if err != nil || n < 1 || strings.TrimLeft(key, "0123456789") != "" {
			return d.fail(path, "GPU count %q is not a positive integer", key)
		}
		rate, err := d.rate(path + "." + key)
		pts = append(pts, Point{GPUs: n, Rate: rate})
		return err
	})
	if err != nil {
		return nil, err
	}
	if len(pts) == 0 {
		return nil, d.fail(path, "no GPU counts")
	}
	slices.SortFunc(pts, func(a, b Point) int { return a.GPUs - b.GPUs })
	for i := 1; i < len(pts); i++ {
		if pts[i].GPUs == pts[i-1].GPUs {
			return nil, d.fail(path, "GPU count %d given twice", pts[i].GPUs)
		}
	}
	return pts, nil
}

// rate reads a finite, non-negative number of steps per second.
func (d *decoder) rate(path string) (float64, error) {
	tok, err := d.token()
	if err != nil {
		return 0, err
	}
	num, ok := tok.(json.Number)
	if !ok {
		return 0, d.fail(path, "want a number of steps/s, got %s", kind(tok))
	}
	r, err := num.Float64()
	if err != nil || math.IsInf(r, 0) {
		return 0, d.fail(path, "throughput %s is out of range", num)
	}
	if r < 0 {
		return 0, d.fail(path, "negative throughput %s", num)
	}
	if r == 0 {
		r = 0 // no negative zero
	}
	return r, nil
}
