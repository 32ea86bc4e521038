package trace

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/gpusched/gpusched/core/model"
)

// samples is where the committed trace samples live, relative to the package.
const samples = "../../testdata/traces"

// readCase is one table row: reading in must give want, or fail with an
// error whose text starts with err.
type readCase struct {
	name string
	in   string
	want []model.JobSpec
	err  string
}

// runReadCases reads every case as file in format and checks the result.
func runReadCases(t *testing.T, file, format string, cases []readCase) {
	t.Helper()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			jobs, err := Read(strings.NewReader(tc.in), file, format)
			if tc.err != "" {
				checkErr(t, err, tc.err)
				return
			}
			if err != nil {
				t.Fatalf("Read: %v", err)
			}
			if !reflect.DeepEqual(jobs, tc.want) {
				t.Errorf("Read:\n got %+v\nwant %+v", jobs, tc.want)
			}
			checkJobs(t, jobs)
		})
	}
}

// checkErr checks that err is an *Error whose text starts with prefix.
func checkErr(t *testing.T, err error, prefix string) {
	t.Helper()
	var perr *Error
	if !errors.As(err, &perr) {
		t.Fatalf("error %v (%T) is not a *trace.Error", err, err)
	}
	if !strings.HasPrefix(err.Error(), prefix) {
		t.Fatalf("error\n %q\ndoes not start with\n %q", err.Error(), prefix)
	}
}

// jobInvariant returns what is wrong with a successful Read result, or "".
func jobInvariant(jobs []model.JobSpec) string {
	if len(jobs) == 0 {
		return "no jobs without an error"
	}
	ids := make(map[string]bool, len(jobs))
	for i, j := range jobs {
		switch {
		case i > 0 && j.Submit < jobs[i-1].Submit:
			return "not sorted by Submit at job " + j.ID
		case j.Submit < 0:
			return "negative Submit of job " + j.ID
		case j.GPUs < 1 || j.MinGPUs < 1 || j.MinGPUs > j.GPUs || j.GPUs > j.MaxGPUs:
			return "bad GPU counts of job " + j.ID
		case ids[j.ID]:
			return "duplicate id " + j.ID
		case (j.Steps > 0) == (j.Duration > 0):
			return "not exactly one of Steps and Duration positive in job " + j.ID
		case j.Steps < 0 || j.Duration < 0 || j.PeakMemMiB < 0 || j.DatasetMB < 0:
			return "negative work, memory or dataset in job " + j.ID
		case j.Steps > 0 && j.Model == "":
			return "steps without model in job " + j.ID
		}
		ids[j.ID] = true
	}
	return ""
}

// checkJobs fails the test if jobs break an invariant of Read.
func checkJobs(t *testing.T, jobs []model.JobSpec) {
	t.Helper()
	if msg := jobInvariant(jobs); msg != "" {
		t.Fatal(msg)
	}
}

// rigid returns a rigid job spec for table rows.
func rigid(id string, submit model.Time, gpus int) model.JobSpec {
	return model.JobSpec{ID: id, Submit: submit, GPUs: gpus, MinGPUs: gpus, MaxGPUs: gpus}
}

func TestErrorText(t *testing.T) {
	for _, tc := range []struct {
		err  Error
		want string
	}{
		{Error{File: "a.csv", Line: 3, Msg: "bad"}, "a.csv:3: bad"},
		{Error{File: "a.csv", Msg: "no jobs"}, "a.csv: no jobs"},
		{Error{Msg: "bare"}, "bare"},
		{Error{Line: 2, Msg: "no file"}, ":2: no file"},
	} {
		if got := tc.err.Error(); got != tc.want {
			t.Errorf("Error() = %q, want %q", got, tc.want)
		}
	}
}

func TestFormats(t *testing.T) {
	want := []string{"auto", "gavel", "philly", "tiresias", "pollux", "jsonl", "alibaba"}
	if got := Formats(); !slices.Equal(got, want) {
		t.Errorf("Formats() = %v, want %v", got, want)
	}
	Formats()[0] = "changed"
	if Formats()[0] != "auto" {
		t.Error("Formats returns a shared slice")
	}
}

func TestReadErrors(t *testing.T) {
	long := strings.Repeat("x", maxLine+10)
	for _, tc := range []struct {
		name, file, format, in, err string
	}{
		{"unknown format", "t.csv", "yaml", "x", `t.csv: unknown trace format "yaml"`},
		{"undetectable", "t.txt", "auto", "hello\n", "t.txt: cannot detect the trace format"},
		{"empty auto", "t.txt", "", "", "t.txt: cannot detect the trace format"},
		{"empty jsonl", "t.jsonl", "auto", "", "t.jsonl: no jobs in the trace"},
		{"blank jsonl", "t.jsonl", "jsonl", "\n \n\t\n", "t.jsonl: no jobs in the trace"},
		{"empty gavel", "t.trace", "gavel", "", "t.trace: no jobs in the trace"},
		{"empty philly", "t.csv", "philly", "", `t.csv: missing header "timestamp,`},
		{"header only", "t.csv", "auto", phillyHeader + "\n", "t.csv: no jobs in the trace"},
		{"long first line", "t.jsonl", "jsonl", long, "t.jsonl:1: line is longer than 1048576 bytes"},
		{"long later line", "t.csv", "philly", phillyHeader + "\n\n" + long, "t.csv:3: line is longer than"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Read(strings.NewReader(tc.in), tc.file, tc.format)
			checkErr(t, err, tc.err)
		})
	}
}

// failingReader returns data and then a read error.
type failingReader struct{ data []byte }

func (r *failingReader) Read(p []byte) (int, error) {
	if len(r.data) == 0 {
		return 0, errors.New("disk on fire")
	}
	n := copy(p, r.data)
	r.data = r.data[n:]
	return n, nil
}

func TestReadIOError(t *testing.T) {
	in := []byte(phillyHeader + "\n2017-10-09 07:01:55,66.0,1,66.0,c\n")
	for _, format := range []string{"philly", "auto"} {
		_, err := Read(&failingReader{data: in}, "t.csv", format)
		checkErr(t, err, "t.csv")
		if !strings.Contains(err.Error(), "disk on fire") {
			t.Errorf("%s: error %q does not say why", format, err)
		}
	}
}

func TestReadAutoCRLFAndBOM(t *testing.T) {
	in := "\xef\xbb\xbf" + strings.ReplaceAll(tiresiasHeader+"\n0,1,0,10,vgg19,100,5\n", "\n", "\r\n")
	jobs, err := Read(strings.NewReader(in), "t.csv", "auto")
	if err != nil {
		t.Fatal(err)
	}
	want := rigid("0", 0, 1)
	want.Model, want.Duration = "vgg19", 100*model.Second
	if !reflect.DeepEqual(jobs, []model.JobSpec{want}) {
		t.Errorf("got %+v, want %+v", jobs, want)
	}
}

// TestSamples reads every committed sample with format auto.
func TestSamples(t *testing.T) {
	for _, tc := range []struct {
		file   string
		format string
		jobs   int
	}{
		{"gavel/small_test.trace", "gavel", 20},
		{"gavel/artifact_evaluation.trace", "gavel", 15},
		{"gavel/medium_test.trace", "gavel", 20},
		{"philly/philly-head2000.csv", "philly", 1999},
		{"tiresias/60_job.csv", "tiresias", 60},
		{"pollux/workload-6.csv", "pollux", 160},
	} {
		t.Run(tc.file, func(t *testing.T) {
			data, err := os.ReadFile(filepath.Join(samples, tc.file))
			if err != nil {
				t.Fatal(err)
			}
			if f, err := Detect(tc.file, data); err != nil || f != tc.format {
				t.Fatalf("Detect = %q, %v; want %q", f, err, tc.format)
			}
			jobs, err := Read(bytes.NewReader(data), tc.file, "auto")
			if err != nil {
				t.Fatal(err)
			}
			if len(jobs) != tc.jobs {
				t.Errorf("got %d jobs, want %d", len(jobs), tc.jobs)
			}
			checkJobs(t, jobs)
		})
	}
}

func TestSortStable(t *testing.T) {
	in := `{"id":"c","submit_s":5,"gpus":1,"duration_s":1}
{"id":"a","submit_s":1,"gpus":1,"duration_s":1}
{"id":"z","submit_s":5,"gpus":1,"duration_s":1}
{"id":"b","submit_s":1,"gpus":1,"duration_s":1}
{"id":"d","submit_s":0.5,"gpus":1,"duration_s":1}
`
	jobs, err := Read(strings.NewReader(in), "t.jsonl", "jsonl")
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, j := range jobs {
		got = append(got, j.ID)
	}
	if want := []string{"d", "a", "b", "c", "z"}; !slices.Equal(got, want) {
		t.Errorf("order %v, want %v", got, want)
	}
}

func TestIndexIDs(t *testing.T) {
	ids := indexIDs(1002)
	for _, i := range []int{0, 9, 10, 99, 100, 1001} {
		if want := strconv.Itoa(i); ids[i] != want {
			t.Errorf("ids[%d] = %q, want %q", i, ids[i], want)
		}
	}
	if len(indexIDs(0)) != 0 {
		t.Error("indexIDs(0) not empty")
	}
}
