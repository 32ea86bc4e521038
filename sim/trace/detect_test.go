package trace

import (
	"strings"
	"testing"
)

func TestDetect(t *testing.T) {
	gavelLine := "ResNet-18 (batch size 16)\tpython3 main.py\tcifar10\t--num_steps\t1\t1817\t1\t1\t-1.000000\t0\n"
	for _, tc := range []struct {
		name, file, head, want string
	}{
		{"trace ext", "x.trace", gavelLine, "gavel"},
		{"trace ext, any content", "dir/x.TRACE", "anything", "gavel"},
		{"jsonl ext", "x.jsonl", `{"id":"a"}`, "jsonl"},
		{"ndjson ext", "x.ndjson", "", "jsonl"},
		{"philly header", "philly.csv", phillyHeader + "\n2017-10-09 07:01:55,66.0,1,66.0,11cb48\n", "philly"},
		{"philly header cut", "p", phillyHeader, "philly"},
		{"philly header spaces", "p.csv", " timestamp, duration ,num_gpus,gpu_time,cluster\r\n", "philly"},
		{"tiresias header", "60_job.csv", tiresiasHeader + "\r\n0,1,0,606,vgg19,164,30\r\n", "tiresias"},
		{"pollux header", "w.csv", polluxHeader + "\n", "pollux"},
		{"header beats extension", "x.trace", polluxHeader + "\n", "pollux"},
		{"bom and blank lines", "w.csv", "\xef\xbb\xbf\n\n" + polluxHeader + "\n", "pollux"},
		{"alibaba pod list", "openb_pod_list_default.csv", alibabaHeader + "\nopenb-pod-0000,12000,16384,1,1000,,LS,Running,0,12537496,0\n", "alibaba"},
		{"alibaba pod list without times", "p.csv", alibabaNoTimes + "\n", "alibaba"},
		{"alibaba node list", "n.csv", alibabaNodesHeader + "\n", "alibaba"},
		{"json content", "jobs.txt", "\n{\"id\":\"a\"}\n", "jsonl"},
		{"gavel content", "jobs", gavelLine, "gavel"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := Detect(tc.file, []byte(tc.head))
			if err != nil || got != tc.want {
				t.Errorf("Detect(%q) = %q, %v; want %q", tc.file, got, err, tc.want)
			}
		})
	}
}

func TestDetectFails(t *testing.T) {
	for _, tc := range []struct {
		name, file, head string
		says             []string
	}{
		{"unknown csv", "x.csv", "a,b,c\n1,2,3\n", []string{`extension ".csv"`, `first line "a,b,c"`, "philly", "--format"}},
		{"empty", "x.csv", "", []string{`first line ""`}},
		{"wrong header order", "x.csv", "duration,timestamp,num_gpus,gpu_time,cluster\n", []string{"first line"}},
		{"no extension", "trace", "hello world", []string{`extension ""`, `"hello world"`}},
		{"long line cut", "x", strings.Repeat("y", 500), []string{`…`}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := Detect(tc.file, []byte(tc.head))
			checkErr(t, err, tc.file+": cannot detect the trace format")
			if got != "" {
				t.Errorf("Detect returned %q with an error", got)
			}
			for _, s := range tc.says {
				if !strings.Contains(err.Error(), s) {
					t.Errorf("error %q does not contain %q", err, s)
				}
			}
		})
	}
}
