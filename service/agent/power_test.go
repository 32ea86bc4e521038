package agent

import (
	"context"
	"encoding/json"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gpusched/gpusched/service/api"
	"github.com/gpusched/gpusched/service/machine"
)

// redfishDoc is a Chassis Power resource shaped like the DMTF's Redfish
// mockups (public-rackmount1, Chassis/1U/Power), abridged.
const redfishDoc = `{
  "@odata.type": "#Power.v1_5_0.Power",
  "Id": "Power",
  "Name": "Power",
  "PowerControl": [
    {
      "@odata.id": "/redfish/v1/Chassis/1U/Power#/PowerControl/0",
      "MemberId": "0",
      "Name": "Server Power Control",
      "PowerConsumedWatts": 344,
      "PowerRequestedWatts": 800,
      "PowerAvailableWatts": 0,
      "PowerCapacityWatts": 800,
      "PowerAllocatedWatts": 800,
      "PowerMetrics": {"IntervalInMin": 30, "MinConsumedWatts": 271, "MaxConsumedWatts": 489, "AverageConsumedWatts": 319},
      "PowerLimit": {"LimitInWatts": 500, "LimitException": "LogEventOnly", "CorrectionInMs": 50},
      "RelatedItem": [{"@odata.id": "/redfish/v1/Systems/437XR1138R2"}, {"@odata.id": "/redfish/v1/Chassis/1U"}],
      "Status": {"State": "Enabled", "Health": "OK"}
    }
  ],
  "Voltages": [
    {"@odata.id": "/redfish/v1/Chassis/1U/Power#/Voltages/0", "MemberId": "0", "Name": "VRM1 Voltage",
     "SensorNumber": 11, "Status": {"State": "Enabled", "Health": "OK"}, "ReadingVolts": 12}
  ],
  "PowerSupplies": [
    {"@odata.id": "/redfish/v1/Chassis/1U/Power#/PowerSupplies/0", "MemberId": "0", "Name": "Power Supply Bay",
     "Status": {"State": "Enabled", "Health": "Warning"}, "PowerSupplyType": "AC", "LineInputVoltageType": "ACWideRange",
     "LineInputVoltage": 120, "PowerCapacityWatts": 800, "LastPowerOutputWatts": 325}
  ],
  "@odata.id": "/redfish/v1/Chassis/1U/Power"
}`

// redfishBMC serves doc at /redfish/v1/Chassis/1U/Power to user:pass.
func redfishBMC(t *testing.T, doc string) *httptest.Server {
	t.Helper()
	mux := http.NewServeMux()
	mux.HandleFunc("GET /redfish/v1/Chassis/1U/Power", func(w http.ResponseWriter, r *http.Request) {
		if u, p, ok := r.BasicAuth(); !ok || u != "admin" || p != "s3cret" {
			w.Header().Set("WWW-Authenticate", `Basic realm="BMC"`)
			http.Error(w, `{"error":{"code":"Base.1.8.NoValidSession"}}`, http.StatusUnauthorized)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(doc))
	})
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return srv
}

func TestRedfishPower(t *testing.T) {
	bmc := redfishBMC(t, redfishDoc)
	url := bmc.URL + "/redfish/v1/Chassis/1U/Power"
	ctx := context.Background()
	r := &machine.RedfishPower{URL: url, User: "admin", Password: "s3cret"}
	gpus, w, err := r.Sample(ctx)
	if err != nil || w != 344 || gpus != nil {
		t.Fatalf("Sample: %v W, GPUs %v, err %v; want 344 W", w, gpus, err)
	}
	for _, c := range []struct {
		name string
		r    *machine.RedfishPower
		want string
	}{
		{"wrong password", &machine.RedfishPower{URL: url, User: "admin", Password: "no"}, "401"},
		{"no such resource", &machine.RedfishPower{URL: bmc.URL + "/redfish/v1/Chassis/2U/Power", User: "admin", Password: "s3cret"}, "404"},
		{"not a Power resource", &machine.RedfishPower{URL: redfishBMC(t, `{"Id":"1U","Name":"Chassis"}`).URL + "/redfish/v1/Chassis/1U/Power",
			User: "admin", Password: "s3cret"}, "PowerConsumedWatts"},
		{"null reading", &machine.RedfishPower{URL: redfishBMC(t, `{"PowerControl":[{"PowerConsumedWatts":null}]}`).URL + "/redfish/v1/Chassis/1U/Power",
			User: "admin", Password: "s3cret"}, "PowerConsumedWatts"},
	} {
		if _, _, err := c.r.Sample(ctx); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: err %v, want one mentioning %q", c.name, err, c.want)
		}
	}
}

// TestPowerInStatusReports runs an agent with a Redfish sampler: its status
// reports carry the BMC's reading and the node's load.
func TestPowerInStatusReports(t *testing.T) {
	bmc := redfishBMC(t, redfishDoc)
	var (
		mu  sync.Mutex
		got *api.PowerReading
	)
	mux := http.NewServeMux()
	mux.HandleFunc("POST /v1/agents/register", func(w http.ResponseWriter, _ *http.Request) {
		writeJSONAnswer(w, api.RegisterReply{HeartbeatS: 0.02})
	})
	mux.HandleFunc("GET /v1/agents/{name}/work", func(w http.ResponseWriter, _ *http.Request) {
		time.Sleep(20 * time.Millisecond)
		writeJSONAnswer(w, api.Work{Version: 1, Replicas: []api.Replica{}})
	})
	mux.HandleFunc("POST /v1/agents/{name}/status", func(w http.ResponseWriter, r *http.Request) {
		var st api.Status
		if err := json.NewDecoder(r.Body).Decode(&st); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		mu.Lock()
		if st.Power != nil {
			got = st.Power
		}
		mu.Unlock()
		writeJSONAnswer(w, api.Work{Version: 1, Replicas: []api.Replica{}})
	})
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	startAgent(t, srv.URL, "", func(c *Config) {
		c.PowerSamplers = machine.PowerSamplers(nil, bmc.URL+"/redfish/v1/Chassis/1U/Power",
			func(k string) string {
				return map[string]string{machine.EnvRedfishUser: "admin", machine.EnvRedfishPassword: "s3cret"}[k]
			}, nil)
	})
	waitFor(t, "a status report with a power reading", func() bool {
		mu.Lock()
		defer mu.Unlock()
		return got != nil
	})
	mu.Lock()
	defer mu.Unlock()
	if got.NodeW != 344 || got.Load != 0 || got.At.IsZero() || time.Since(got.At) > time.Minute {
		t.Errorf("reading %+v, want 344 W at load 0, taken just now", got)
	}
}

// TestBusyShare checks the load the agent reports: the GPUs of its running
// replicas over its GPUs.
func TestBusyShare(t *testing.T) {
	gpus, err := machine.ParseGPUs("v100=4")
	if err != nil {
		t.Fatal(err)
	}
	a, err := New(Config{Server: "http://127.0.0.1:1", Name: "n1", DataDir: t.TempDir(), GPUs: gpus})
	if err != nil {
		t.Fatal(err)
	}
	if l := a.busyShare(); l != 0 {
		t.Errorf("idle load %v", l)
	}
	a.reps.add(newProc(api.Replica{ID: "j1.1.0", Job: "j1", GPUs: []int{0, 2}}, ""))
	a.reps.add(newProc(api.Replica{ID: "j2.1.0", Job: "j2", GPUs: []int{2, 3, 9}}, "")) // 9 is not the node's
	exited := newProc(api.Replica{ID: "j3.1.0", Job: "j3", GPUs: []int{1}}, "")
	exited.status.Phase = api.ReplicaExited
	a.reps.add(exited)
	if l := a.busyShare(); l != 0.75 {
		t.Errorf("load %v, want 0.75 (GPUs 0, 2, 3 of 4)", l)
	}
	a.samplePower(context.Background(), time.Now()) // no samplers: no reading
	if r := a.powerReading(); r != nil {
		t.Errorf("a reading without samplers: %+v", r)
	}
}

// TestNVMLPowerAbsent: without the NVML library (this machine has no GPU)
// OpenNVMLPower fails and PowerSamplers leaves NVML out, saying so once.
func TestNVMLPowerAbsent(t *testing.T) {
	p, err := machine.OpenNVMLPower([]int{0})
	if err == nil {
		defer p.Close()
		if _, _, err := p.Sample(context.Background()); err != nil {
			t.Logf("NVML present; its sample failed: %v", err)
		}
		t.Skip("NVML is present on this machine")
	}
	var log strings.Builder
	ss := machine.PowerSamplers([]api.GPU{{Index: 0, Type: "v100"}}, "", nil, slog.New(slog.NewTextHandler(&log, nil)))
	if len(ss) != 0 || !strings.Contains(log.String(), "no GPU power readings") {
		t.Errorf("samplers %v, log %q", ss, log.String())
	}
}
