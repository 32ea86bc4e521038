package profile

import (
	"math"
	"reflect"
	"strings"
	"testing"
)

func TestParseProfiles(t *testing.T) {
	in := `{"profiles": [
	  {"job_type": "bert", "peak_mem_mib": 22000,
	   "throughput": {"A100": {"4": 11.5, "1": 3.1, "2": 6}, "t4": {"1": 0}}},
	  {"job_type": "ResNet-50 (batch size 64)", "peak_mem_mib": 0, "throughput": {"v100": {"8": -0}}},
	  {"job_type": "gpt", "peak_mem_mib": 70000}]}`
	got, err := ParseProfiles("p.json", []byte(in))
	if err != nil {
		t.Fatal(err)
	}
	want := []Profile{
		{JobType: "bert", PeakMemMiB: 22000, Throughput: map[string][]Point{
			"a100": {{1, 3.1}, {2, 6}, {4, 11.5}}, "t4": {{1, 0}}}},
		{JobType: "ResNet-50 (batch size 64)", Throughput: map[string][]Point{"v100": {{8, 0}}}},
		{JobType: "gpt", PeakMemMiB: 70000, Throughput: map[string][]Point{}},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got %+v\nwant %+v", got, want)
	}
	if r := got[1].Throughput["v100"][0].Rate; math.Signbit(r) {
		t.Error("negative zero kept")
	}
}

// wrap wraps one profile entry (JSON) in a file.
func wrap(s string) string { return `{"profiles": [` + s + `]}` }

func TestParseProfilesErrors(t *testing.T) {
	const ok = `{"job_type": "a", "peak_mem_mib": 1}`
	tp := func(s string) string { return wrap(`{"job_type": "a", "throughput": ` + s + `}`) }
	tests := []struct{ name, in, want string }{
		{"empty input", ``, "p.json: unexpected EOF"},
		{"syntax", `{"profiles": x}`, "p.json: invalid character 'x' looking for beginning of value"},
		{"truncated", `{"profiles": [`, "p.json: unexpected EOF"},
		{"not an object", `[]`, `p.json: want an object with a "profiles" list, got a list`},
		{"null", `null`, `p.json: want an object with a "profiles" list, got null`},
		{"unknown top-level field", `{"profile": []}`, `p.json: unknown field "profile" (known: profiles)`},
		{"trailing data", wrap(ok) + ` {}`, "p.json: unexpected data after the top-level object"},
		{"no profiles key", `{}`, "p.json: profiles: required"},
		{"empty list", `{"profiles": []}`, "p.json: profiles: no profiles"},
		{"profiles not a list", `{"profiles": {}}`, "p.json: profiles: want a list of profiles, got an object"},
		{"top-level key twice", `{"profiles": [` + ok + `], "profiles": []}`, `p.json: key "profiles" given twice`},
		{"entry not an object", wrap(`1`), "p.json: profiles[0]: want an object (job_type, peak_mem_mib, throughput), got the number 1"},
		{"unknown field", wrap(ok + `, {"job_type": "b", "peak_mem": 1}`),
			`p.json: profiles[1]: unknown field "peak_mem" (known: job_type, peak_mem_mib, throughput)`},
		{"key twice", wrap(`{"job_type": "a", "job_type": "b"}`), `p.json: profiles[0]: key "job_type" given twice`},
		{"no job type", wrap(`{"peak_mem_mib": 1}`), "p.json: profiles[0].job_type: required"},
		{"job type not a string", wrap(`{"job_type": 7}`), "p.json: profiles[0].job_type: want a string, got the number 7"},
		{"empty job type", wrap(`{"job_type": " "}`), "p.json: profiles[0].job_type: empty job type"},
		{"job type twice", wrap(ok + `, {"job_type": "b", "peak_mem_mib": 1}, ` + ok),
			`p.json: profiles[2].job_type: "a" already given in profiles[0]`},
		{"neither throughput nor memory", wrap(`{"job_type": "a", "peak_mem_mib": 0}`),
			"p.json: profiles[0]: give throughput, peak_mem_mib or both"},
		{"fractional memory", wrap(`{"job_type": "a", "peak_mem_mib": 1.5}`),
			"p.json: profiles[0].peak_mem_mib: want an integer number of MiB in 0..2147483647, got the number 1.5"},
		{"negative memory", wrap(`{"job_type": "a", "peak_mem_mib": -1}`),
			"p.json: profiles[0].peak_mem_mib: want an integer number of MiB in 0..2147483647, got the number -1"},
		{"huge memory", wrap(`{"job_type": "a", "peak_mem_mib": 2147483648}`),
			"p.json: profiles[0].peak_mem_mib: want an integer number of MiB in 0..2147483647, got the number 2147483648"},
		{"memory as a string", wrap(`{"job_type": "a", "peak_mem_mib": "1"}`),
			`p.json: profiles[0].peak_mem_mib: want an integer number of MiB in 0..2147483647, got the string "1"`},
		{"throughput not an object", tp(`[]`),
			"p.json: profiles[0].throughput: want an object mapping GPU types to {GPU count: steps/s}, got a list"},
		{"empty GPU type", tp(`{"": {"1": 1}}`), "p.json: profiles[0].throughput: empty GPU type name"},
		{"GPU type twice", tp(`{"a100": {"1": 1}, "A100": {"1": 2}}`),
			`p.json: profiles[0].throughput.A100: GPU type already given as "a100" (names are compared without regard to case)`},
		{"counts not an object", tp(`{"v100": 3}`),
			"p.json: profiles[0].throughput.v100: want an object mapping GPU counts to steps/s, got the number 3"},
		{"no counts", tp(`{"v100": {}}`), "p.json: profiles[0].throughput.v100: no GPU counts"},
		{"count not a number", tp(`{"v100": {"x": 1}}`), `p.json: profiles[0].throughput.v100: GPU count "x" is not a positive integer`},
		{"count zero", tp(`{"v100": {"0": 1}}`), `p.json: profiles[0].throughput.v100: GPU count "0" is not a positive integer`},
		{"count with a sign", tp(`{"v100": {"+1": 1}}`), `p.json: profiles[0].throughput.v100: GPU count "+1" is not a positive integer`},
		{"count twice", tp(`{"v100": {"1": 1, "01": 2}}`), "p.json: profiles[0].throughput.v100: GPU count 1 given twice"},
		{"count key twice", tp(`{"v100": {"1": 1, "1": 2}}`), `p.json: profiles[0].throughput.v100: key "1" given twice`},
		{"rate not a number", tp(`{"v100": {"2": "fast"}}`),
			`p.json: profiles[0].throughput.v100.2: want a number of steps/s, got the string "fast"`},
		{"rate null", tp(`{"v100": {"2": null}}`), "p.json: profiles[0].throughput.v100.2: want a number of steps/s, got null"},
		{"negative rate", tp(`{"v100": {"2": -1}}`), "p.json: profiles[0].throughput.v100.2: negative throughput -1"},
		{"rate out of range", tp(`{"v100": {"2": 1e999}}`), "p.json: profiles[0].throughput.v100.2: throughput 1e999 is out of range"},
	}
	for _, tc := range tests {
		_, err := ParseProfiles("p.json", []byte(tc.in))
		if err == nil || err.Error() != tc.want {
			t.Errorf("%s: error\n  %v\nwant\n  %s", tc.name, err, tc.want)
		}
	}
}

func FuzzParseProfiles(f *testing.F) {
	f.Add([]byte(wrap(`{"job_type": "a", "peak_mem_mib": 22000, "throughput": {"A100": {"1": 3.1, "2": 6}, "t4": {"1": 0}}}`)))
	f.Add([]byte(wrap(`{"job_type": "a", "peak_mem_mib": 1}, {"job_type": "b", "throughput": {"v100": {"8": 1e3}}}`)))
	f.Add([]byte(wrap(`{"job_type": "a", "throughput": {"v100": {"1": 1, "01": 2}}}`)))
	f.Fuzz(func(t *testing.T, data []byte) {
		ps, err := ParseProfiles("f", data)
		if err != nil {
			if !strings.HasPrefix(err.Error(), "f: ") {
				t.Fatalf("error does not name the file: %v", err)
			}
			return
		}
		if len(ps) == 0 {
			t.Fatal("no profiles and no error")
		}
		seen := map[string]bool{}
		for _, p := range ps {
			if strings.TrimSpace(p.JobType) == "" || seen[p.JobType] {
				t.Fatalf("bad or repeated job type %q", p.JobType)
			}
			seen[p.JobType] = true
			if p.PeakMemMiB < 0 || p.PeakMemMiB > MaxPeakMemMiB || (p.PeakMemMiB == 0 && len(p.Throughput) == 0) {
				t.Fatalf("%s: bad peak memory %d or empty profile", p.JobType, p.PeakMemMiB)
			}
			for gt, pts := range p.Throughput {
				if gt != strings.ToLower(gt) || len(pts) == 0 {
					t.Fatalf("%s: GPU type %q: %v", p.JobType, gt, pts)
				}
				for i, q := range pts {
					if q.GPUs < 1 || q.Rate < 0 || math.IsInf(q.Rate, 0) || math.IsNaN(q.Rate) || (i > 0 && q.GPUs <= pts[i-1].GPUs) {
						t.Fatalf("%s: %s: bad points %v", p.JobType, gt, pts)
					}
				}
			}
		}
		m := (&Matrix{}).Merge(ps...)
		for _, p := range ps {
			if m.PeakMemMiB(p.JobType) != p.PeakMemMiB || m.HasModel(p.JobType) != (len(p.Throughput) > 0) {
				t.Fatalf("%s: merge lost the profile", p.JobType)
			}
		}
	})
}
