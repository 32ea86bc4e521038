package trace

import (
	"bytes"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/gpusched/gpusched/config"
	"github.com/gpusched/gpusched/core/model"
)

// sampleSeed returns the first n lines of a committed sample.
func sampleSeed(f *testing.F, file string, n int) []byte {
	f.Helper()
	data, err := os.ReadFile(filepath.Join(samples, file))
	if err != nil {
		f.Fatal(err)
	}
	lines := bytes.SplitAfter(data, []byte("\n"))
	return bytes.Join(lines[:min(n, len(lines))], nil)
}

// fuzzRead fuzzes Read in one format: it must never panic, every error must
// be an *Error naming the file, and every result must keep the invariants.
func fuzzRead(f *testing.F, format, file string, seeds ...[]byte) {
	for _, s := range seeds {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		jobs, err := Read(bytes.NewReader(data), file, format)
		if err != nil {
			var perr *Error
			if !errors.As(err, &perr) || perr.Line < 0 {
				t.Fatalf("error %v (%T) is not a *trace.Error", err, err)
			}
			if !strings.HasPrefix(err.Error(), file) {
				t.Fatalf("error %q does not start with the file name", err)
			}
			if jobs != nil {
				t.Fatal("jobs returned with an error")
			}
			return
		}
		if msg := jobInvariant(jobs); msg != "" {
			t.Fatal(msg)
		}
		if msg := scalingInvariant(jobs); msg != "" {
			t.Fatal(msg)
		}
		if msg := requestsInvariant(jobs); msg != "" {
			t.Fatal(msg)
		}
		if format == "alibaba" {
			if msg := alibabaInvariant(jobs); msg != "" {
				t.Fatal(msg)
			}
		}
	})
}

// scalingInvariant returns what is wrong with the scaling curves of a
// successful Read result, or "".
func scalingInvariant(jobs []model.JobSpec) string {
	for _, j := range jobs {
		if j.Scaling == nil {
			continue
		}
		if j.Steps > 0 {
			return "scaling curve on the step job " + j.ID
		}
		if msg := curveInvariant(j.Scaling); msg != "" {
			return "job " + j.ID + ": " + msg
		}
	}
	return ""
}

// curveInvariant returns what is wrong with a scaling curve, or "": it must
// have points, GPU counts positive and strictly increasing, rates finite and
// non-negative, and some rate positive.
func curveInvariant(pts []model.ScalePoint) string {
	if len(pts) == 0 {
		return "empty scaling curve"
	}
	positive := false
	for i, p := range pts {
		switch {
		case p.GPUs < 1 || (i > 0 && p.GPUs <= pts[i-1].GPUs):
			return fmt.Sprintf("scaling curve GPU counts not positive and increasing: %v", pts)
		case p.Rate < 0 || math.IsNaN(p.Rate) || math.IsInf(p.Rate, 0):
			return fmt.Sprintf("scaling curve rate %v at %d GPUs", p.Rate, p.GPUs)
		}
		positive = positive || p.Rate > 0
	}
	if !positive {
		return "scaling curve with no positive rate"
	}
	return ""
}

func FuzzGavel(f *testing.F) {
	fuzzRead(f, "gavel", "f.trace",
		sampleSeed(f, "gavel/small_test.trace", 5),
		sampleSeed(f, "gavel/artifact_evaluation.trace", 20),
		[]byte(gavelRow("A3C", "10", "2", "1.5", "3.25")),
		[]byte("a\tb\tc\td\t1\t1\t1\t1\t-1\t0"))
}

func FuzzPhilly(f *testing.F) {
	fuzzRead(f, "philly", "f.csv",
		sampleSeed(f, "philly/philly-head2000.csv", 20),
		[]byte(phillyHeader+"\n2016-02-29 23:59:59,0,1,0,\n2017-10-09 07:01:55,66.5,128,66.0,x\n"),
		[]byte(phillyHeader+"\r\n\r\n2017-12-31 00:00:00,1e3,2,2e3,c\r\n"))
}

func FuzzTiresias(f *testing.F) {
	fuzzRead(f, "tiresias", "f.csv",
		sampleSeed(f, "tiresias/60_job.csv", 10),
		[]byte(tiresiasHeader+"\na,1,0.5,0,vgg,0,0\nb,2,0.5,1,vgg,1.5,3\n"))
}

func FuzzPollux(f *testing.F) {
	fuzzRead(f, "pollux", "f.csv",
		sampleSeed(f, "pollux/workload-6.csv", 12),
		[]byte(polluxHeader+"\na,1,cifar10,20,4096\nb,2.5,yolov3,4,64\nc,3,imagenet,48,6400\nd,0,bert,16,384\n"+
			"e,0,deepspeech2,12,640\nf,0,ncf,1,32768\n"))
}

func FuzzJSONL(f *testing.F) {
	fuzzRead(f, "jsonl", "f.jsonl",
		[]byte(`{"id":"j1","submit_s":0,"gpus":4,"min_gpus":2,"max_gpus":8,"model":"ResNet-50 (batch size 64)","steps":10000,"priority":0}`+"\n"+
			`{"id":"j2","submit_s":30,"gpus":1,"duration_s":3600,"gpu_type":"v100","user":"alice"}`+"\n"),
		[]byte(`{"id":"x","submit_s":1.5,"gpus":2,"model":"m","duration_s":0,"peak_mem_mib":100}`+"\n\n"+
			`{"id":"y","submit_s":1.5,"gpus":2,"model":"m","steps":1}`),
		[]byte(`{"id":"a","submit_s":0,"gpus":1,"duration_s":1,"id":"b"}`),
		[]byte(`{"id":"s","submit_s":0,"gpus":2,"max_gpus":8,"replica_gpus":2,"duration_s":60,"scaling":[[1,1.0],[2,1.8],[4,3.1]]}`+"\n"+
			`{"id":"z","submit_s":1,"gpus":4,"duration_s":6,"scaling":[[2,0],[3,1e-300],[64,5]]}`),
		[]byte(`{"id":"d","submit_s":0,"gpus":1,"duration_s":60,"dataset_gb":0.0004,"upload":"lab"}`+"\n"+
			`{"id":"e","submit_s":0,"gpus":1,"duration_s":60,"dataset_gb":1e9,"upload":""}`),
		[]byte(`{"id":"c","submit_s":0,"gpus":2,"duration_s":60,"cpus":2.5,"memory":"16Gi","resources":{"rdma/hca":1,"pods":"2"}}`+"\n"+
			`{"id":"m","submit_s":1,"gpus":1,"duration_s":6,"replica_cpu_milli":500,"replica_mem_mib":1024,"resources":{"ephemeral-storage":"1G"}}`),
		[]byte(`{"id":"q","submit_s":0,"gpus":1,"duration_s":1,"cpus":"250m","memory":1e9,"resources":{"x":0,"a/b":null}}`+"\n"+
			`{"id":"w","submit_s":0,"gpus":1,"duration_s":1,"cpus":-0.0,"memory":"1e3","resources":{"cpu":"1"}}`))
}

func FuzzDetect(f *testing.F) {
	for _, s := range []struct{ name, head string }{
		{"x.trace", gavelRow("A3C", "10", "2", "1", "0")},
		{"x.jsonl", `{"id":"a"}`},
		{"philly.csv", string(sampleSeed(f, "philly/philly-head2000.csv", 3))},
		{"60_job.csv", string(sampleSeed(f, "tiresias/60_job.csv", 3))},
		{"w.csv", string(sampleSeed(f, "pollux/workload-6.csv", 3))},
		{"pods.csv", string(sampleSeed(f, "alibaba/openb_pod_list_default-head400.csv", 3))},
		{"nodes.csv", alibabaNodesHeader + "\nn,1,1,1,T4\n"},
		{"x.csv", "a,b\n"},
		{"", ""},
	} {
		f.Add(s.name, []byte(s.head))
	}
	f.Fuzz(func(t *testing.T, name string, head []byte) {
		format, err := Detect(name, head)
		if err != nil {
			var perr *Error
			if !errors.As(err, &perr) || !strings.HasPrefix(err.Error(), name) {
				t.Fatalf("error %q (%T) is not a *trace.Error starting with %q", err, err, name)
			}
			return
		}
		if format == "auto" || !slices.Contains(Formats(), format) {
			t.Fatalf("Detect returned %q", format)
		}
		// Reading what was detected must not panic either.
		if _, err := Read(bytes.NewReader(head), name, "auto"); err != nil {
			var perr *Error
			if !errors.As(err, &perr) {
				t.Fatalf("Read error %v (%T) is not a *trace.Error", err, err)
			}
		}
	})
}

// requestsInvariant returns what is wrong with the replica requests of a
// successful Read result, or "": every amount positive and at most 2^53,
// every name one config.CheckResourceName accepts.
func requestsInvariant(jobs []model.JobSpec) string {
	for _, j := range jobs {
		for name, v := range j.Requests {
			if err := config.CheckResourceName(name); err != nil || v <= 0 || v > 1<<53 {
				return fmt.Sprintf("job %s: request %s=%d (%v)", j.ID, name, v, err)
			}
		}
	}
	return ""
}

func FuzzAlibaba(f *testing.F) {
	fuzzRead(f, "alibaba", "f.csv",
		sampleSeed(f, "alibaba/openb_pod_list_default-head400.csv", 25),
		[]byte(alibabaHeader+"\np0,12000,16384,1,1000,,LS,Running,0,12537496,0\np1,88000,327680,8,1000,G2,BE,Succeeded,100,400,160\n"+
			"p2,6000,0,2,1000,,LS,Pending,10,70,\np3,1,1,0,0,,BE,Running,0,1,0\np4,1,1,1,460,T4|P100,BE,Running,0,1,0\n"),
		[]byte(alibabaHeader+"\r\n\r\n p5 , 0 , 0 , 64 , 1000 , V100M32|T4 , , , 1 , 1 , \r\n"),
		[]byte(alibabaNoTimes+"\np,1,1,1,1000\n"),
		[]byte(alibabaNodesHeader+"\nn,1,1,1,T4\n"))
}

// FuzzAlibabaNodes fuzzes ReadAlibabaNodes: it must never panic, every
// error must be an *Error naming the file, and every node list it accepts
// must have unique names without '/' and GPU counts in 0..64, each node
// with GPUs naming its model.
func FuzzAlibabaNodes(f *testing.F) {
	f.Add(sampleSeed(f, "alibaba/openb_node_list_gpu_node-every50.csv", 10))
	f.Add([]byte(alibabaNodesHeader + "\nn0,64000,262144,2,P100\nn1,32000,262144,0,\r\n\n n2 , 96000 , 393216 , 8 , G2 \n"))
	f.Add([]byte(alibabaNodesHeader + "\nn0,1,1,65,T4\nn0,-1,1,1,\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		nodes, err := ReadAlibabaNodes(bytes.NewReader(data), "n.csv")
		if err != nil {
			var perr *Error
			if !errors.As(err, &perr) || !strings.HasPrefix(err.Error(), "n.csv") || nodes != nil {
				t.Fatalf("error %v (%T), nodes %v", err, err, nodes)
			}
			return
		}
		seen := map[string]bool{}
		for _, n := range nodes {
			switch {
			case n.Name == "" || seen[n.Name] || strings.ContainsAny(n.Name, "/ \t"):
				t.Fatalf("node name %q", n.Name)
			case n.GPUs < 0 || n.GPUs > model.MaxGPUsPerNode || (n.GPUs > 0 && n.Model == ""):
				t.Fatalf("node %+v", n)
			case n.CPUMilli < 0 || n.MemMiB < 0 || n.CPUMilli > maxCPUMilli || n.MemMiB > maxMemMiB:
				t.Fatalf("node %+v", n)
			}
			seen[n.Name] = true
		}
	})
}

// alibabaInvariant returns what is wrong with the jobs of an Alibaba pod
// list, or "": each one replica of all its GPUs, rigid, given by a
// duration, held to at most one GPU type.
func alibabaInvariant(jobs []model.JobSpec) string {
	for _, j := range jobs {
		if j.ReplicaGPUs != j.GPUs || j.Elastic() || j.Duration <= 0 || j.Steps != 0 || strings.Contains(j.GPUType, "|") {
			return fmt.Sprintf("alibaba job %+v", j)
		}
	}
	return ""
}
