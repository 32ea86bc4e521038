package server

import (
	"bytes"
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/gpusched/gpusched/service/api"
)

func TestETAEndpoints(t *testing.T) {
	h := newHarness(t, nil)
	var none api.ETAList
	q := h.submit(`{"command":["x"],"gpus":1,"time_limit_s":60}`)
	h.call("GET", "/v1/eta", nil, http.StatusOK, &none)
	if len(none.ETAs) != 1 || none.ETAs[0].PredictedStart != nil || !strings.Contains(none.ETAs[0].Reason, "no node") {
		t.Errorf("without nodes: %+v", none)
	}
	a := h.agent("n1", "v100", 1)
	a.register()
	h.waitState(q.ID, api.Running)
	w := h.submit(`{"command":["x"],"gpus":1,"total_steps":100,"model":"CycleGAN"}`)
	var e api.ETA
	h.call("GET", "/v1/jobs/"+w.ID+"/eta", nil, http.StatusOK, &e)
	if e.Job != w.ID || e.State != api.Queued || e.PredictedStart == nil || e.StartP10 == nil || e.Basis.Length != "steps" ||
		e.Basis.Speed != "matrix" || e.Basis.Runs != 20 {
		t.Errorf("ETA of the waiting job: %+v", e)
	}
	var list api.ETAList
	h.call("GET", "/v1/eta", nil, http.StatusOK, &list)
	if len(list.ETAs) != 2 || list.ETAs[0].Job != q.ID || list.ETAs[0].Basis.Length != "time-limit" {
		t.Errorf("GET /v1/eta: %+v", list)
	}
	if code, body := h.do("GET", "/v1/jobs/j99/eta", nil); code != http.StatusNotFound {
		t.Errorf("unknown job: %d %s", code, body)
	}
	h.call("POST", "/v1/jobs/"+w.ID+"/cancel", nil, http.StatusOK, nil)
	if code, body := h.do("GET", "/v1/jobs/"+w.ID+"/eta", nil); code != http.StatusConflict || !strings.Contains(string(body), "no forecast") {
		t.Errorf("ended job: %d %s", code, body)
	}
	var acc api.ETAAccuracy
	h.call("GET", "/v1/eta/accuracy", nil, http.StatusOK, &acc)
	if len(acc.ByLead) != 4 || len(acc.Spreads) != 6 || acc.Spreads[0].Class != "steps/measured" {
		t.Errorf("accuracy: %+v", acc)
	}
	if code, _ := h.do("POST", "/v1/eta", nil); code != http.StatusMethodNotAllowed {
		t.Errorf("POST /v1/eta: %d", code)
	}
}

func TestDashboardEndpoints(t *testing.T) {
	h := newHarness(t, nil)
	a := h.agent("n1", "v100", 2)
	a.register()
	j := h.submit(`{"command":["x"],"gpus":1}`)
	h.waitState(j.ID, api.Running)
	var c api.ClusterView
	h.call("GET", "/v1/cluster", nil, http.StatusOK, &c)
	if len(c.Nodes) != 1 || c.Nodes[0].Load != 0.5 || len(c.Types) != 1 || c.Types[0] != (api.TypeView{Type: "v100", GPUs: 2, Busy: 1, Free: 1}) ||
		c.Jobs[api.Running] != 1 {
		t.Errorf("cluster view %+v", c)
	}
	var s api.JobSeries
	h.call("GET", "/v1/jobs/"+j.ID+"/series", nil, http.StatusOK, &s)
	if s.Job != j.ID || len(s.Replicas) != 1 || s.Replicas[0].Node != "n1" || s.Progress == nil || s.Power == nil {
		t.Errorf("series %+v", s)
	}
	if code, _ := h.do("GET", "/v1/jobs/j99/series", nil); code != http.StatusNotFound {
		t.Errorf("series of an unknown job: %d", code)
	}
}

func TestUIFiles(t *testing.T) {
	h := newHarness(t, nil)
	client := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := client.Get(h.http.URL + "/ui")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusMovedPermanently || resp.Header.Get("Location") != "ui/" {
		t.Errorf("GET /ui: %d to %q", resp.StatusCode, resp.Header.Get("Location"))
	}
	for path, typ := range map[string]string{"": "text/html", "app.js": "text/javascript", "app.css": "text/css",
		"vendor/uPlot.iife.min.js": "text/javascript", "vendor/uPlot.min.css": "text/css", "vendor/LICENSE.uPlot.txt": "text/plain"} {
		resp, err := http.Get(h.http.URL + "/ui/" + path)
		if err != nil {
			t.Fatal(err)
		}
		var b bytes.Buffer
		_, _ = b.ReadFrom(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK || !strings.HasPrefix(resp.Header.Get("Content-Type"), typ) || b.Len() < 500 ||
			strings.HasPrefix(b.String(), "missing") || !strings.Contains(resp.Header.Get("Content-Security-Policy"), "default-src 'self'") {
			t.Errorf("/ui/%s: %d %s, %d bytes, CSP %q", path, resp.StatusCode, resp.Header.Get("Content-Type"), b.Len(),
				resp.Header.Get("Content-Security-Policy"))
		}
	}
	code, body := h.do("GET", "/ui/nope.js", nil)
	var e api.Error
	if code != http.StatusNotFound || json.Unmarshal(body, &e) != nil || e.Error == "" {
		t.Errorf("unknown file: %d %s", code, body)
	}
	code, body = h.do("GET", "/ui/", nil)
	for _, want := range []string{`src="vendor/uPlot.iife.min.js"`, `src="app.js"`, `id="token"`} {
		if code != 200 || !strings.Contains(string(body), want) {
			t.Errorf("index.html lacks %s", want)
		}
	}
}
