package machine

import (
	"reflect"
	"runtime"
	"strings"
	"testing"

	"github.com/gpusched/gpusched/core/model"
)

func TestNodeCapacity(t *testing.T) {
	host := model.Resources{"cpu": 64000, "memory": 512 << 30}
	for _, c := range []struct {
		name                 string
		host, reserve, extra model.Resources
		want                 model.Resources
		err                  string
	}{
		{name: "host alone", host: host, want: host},
		{name: "nothing", want: model.Resources{}},
		{name: "reserve", host: host, reserve: model.Resources{"cpu": 2000, "memory": 8 << 30},
			want: model.Resources{"cpu": 62000, "memory": 504 << 30}},
		{name: "all reserved", host: host, reserve: model.Resources{"cpu": 64000}, want: model.Resources{"cpu": 0, "memory": 512 << 30}},
		{name: "extra", host: host, extra: model.Resources{"rdma/hca": 4}, reserve: model.Resources{"rdma/hca": 1},
			want: model.Resources{"cpu": 64000, "memory": 512 << 30, "rdma/hca": 3}},
		{name: "reserve too much", host: host, reserve: model.Resources{"cpu": 65000}, err: "reserve cpu: 65 is more than the node's 64"},
		{name: "reserve unknown", host: host, reserve: model.Resources{"rdma/hca": 1}, err: "no rdma/hca to reserve"},
		{name: "reserve undetected memory", host: model.Resources{"cpu": 4000}, reserve: model.Resources{"memory": 1}, err: "no memory"},
		{name: "extra cpu", host: host, extra: model.Resources{"cpu": 1}, err: "--cpus"},
		{name: "extra pods", host: host, extra: model.Resources{"pods": 110}, err: "no pods"},
	} {
		got, err := NodeCapacity(c.host, c.reserve, c.extra)
		switch {
		case c.err != "" && (err == nil || !strings.Contains(err.Error(), c.err)):
			t.Errorf("%s: error %v, want one containing %q", c.name, err, c.err)
		case c.err == "" && (err != nil || !reflect.DeepEqual(got, c.want)):
			t.Errorf("%s: %v, %v; want %v", c.name, got, err, c.want)
		}
	}
}

func TestHostResources(t *testing.T) {
	r, err := HostResources()
	if err != nil {
		t.Fatal(err)
	}
	if r["cpu"] != int64(runtime.NumCPU())*1000 {
		t.Errorf("cpu %d, want %d CPUs", r["cpu"], runtime.NumCPU())
	}
	if runtime.GOOS == "linux" && (r["memory"] < 64<<20 || r["memory"]%(1<<20) != 0) {
		t.Errorf("memory %d: want whole MiB, at least 64 MiB", r["memory"])
	}
}
