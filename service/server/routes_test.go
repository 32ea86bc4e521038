package server

import (
	"strings"
	"testing"

	"sigs.k8s.io/yaml"

	"github.com/gpusched/gpusched/service/api"
)

// TestOpenAPICoversRoutes checks that every route the server serves is in
// api/openapi.yaml with its method, and that the document has no path the
// server does not serve.
func TestOpenAPICoversRoutes(t *testing.T) {
	var doc struct {
		OpenAPI string                    `json:"openapi"`
		Paths   map[string]map[string]any `json:"paths"`
	}
	if err := yaml.Unmarshal(api.OpenAPI(), &doc); err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(doc.OpenAPI, "3.") {
		t.Errorf("openapi version %q", doc.OpenAPI)
	}
	h := newHarness(t, nil)
	served := map[string]bool{}
	for _, r := range h.s.routes() {
		served[r.path] = true
		if _, ok := doc.Paths[r.path][strings.ToLower(r.method)]; !ok {
			t.Errorf("%s %s is not in api/openapi.yaml", r.method, r.path)
		}
	}
	for p := range doc.Paths {
		if !served[p] {
			t.Errorf("api/openapi.yaml describes %s, which the server does not serve", p)
		}
	}
	code, body := h.do("GET", "/openapi.yaml", nil)
	if code != 200 || string(body) != string(api.OpenAPI()) {
		t.Errorf("GET /openapi.yaml: %d, %d bytes", code, len(body))
	}
}

func TestMetrics(t *testing.T) {
	h := newHarness(t, nil)
	h.agent("n1", "v100", 4).register()
	j := h.submit(`{"command":["x"],"gpus":2}`)
	h.submit(`{"command":["x"],"gpus":8}`)
	h.waitState(j.ID, api.Running)
	code, body := h.do("GET", "/metrics", nil)
	if code != 200 {
		t.Fatalf("GET /metrics: %d", code)
	}
	for _, want := range []string{
		"gpusched_submissions_total 2",
		`gpusched_jobs{state="running"} 1`,
		`gpusched_jobs{state="queued"} 1`,
		`gpusched_queue_length{queue="0"} 1`,
		`gpusched_gpus_used{type="v100"} 2`,
		`gpusched_gpus{type="v100"} 4`,
		`gpusched_nodes{state="ready"} 1`,
		"gpusched_schedule_round_seconds_bucket",
		"gpusched_schedule_round_seconds_count",
	} {
		if !strings.Contains(string(body), want) {
			t.Errorf("metrics lack %q", want)
		}
	}
}
