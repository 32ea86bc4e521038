package machine

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"net/http"
	"net/url"
	"os"
	"strconv"
	"strings"

	"github.com/gpusched/gpusched/service/api"
)

// Power sources besides NVML and Redfish (docs/AGENT.md, "Power readings"):
// a file the node's power is written to, and an HTTP endpoint that answers
// with it — for BMCs and meters that expose readings that way, and for
// tests, whose fake sources follow a known curve.

// NodePlaceholder in a power file's path or a power URL is replaced by the
// node's name (ExpandNode), so that one flag serves the several agents of
// `gpusched dev --cluster`.
const NodePlaceholder = "{node}"

// maxPowerDoc bounds a power document.
const maxPowerDoc = 1 << 20

// ExpandNode replaces NodePlaceholder in s by the node's name.
func ExpandNode(s, node string) string { return strings.ReplaceAll(s, NodePlaceholder, node) }

// LoadPowerSampler is a PowerSampler that is told the node's load with
// every reading (HTTPPower passes it to its endpoint, which may model the
// draw from it). The agent calls SampleLoad instead of Sample.
type LoadPowerSampler interface {
	PowerSampler
	SampleLoad(ctx context.Context, load float64) ([]api.GPUPower, float64, error)
}

// powerDoc is the power document of a file or an HTTP source: the node's
// watts, per-GPU watts, or both.
type powerDoc struct {
	NodeW *float64       `json:"node_w"`
	GPUs  []api.GPUPower `json:"gpus"`
}

// ParsePowerDoc reads a power document: a JSON object
// {"node_w": W, "gpus": [{"index": I, "watts": W}, ...]} with at least one
// of the two (unknown keys are an error), or a bare number, the node's
// watts. Watts must be finite and ≥ 0.
func ParsePowerDoc(data []byte) ([]api.GPUPower, float64, error) {
	data = bytes.TrimSpace(data)
	if len(data) == 0 {
		return nil, 0, errors.New("empty power document")
	}
	if data[0] != '{' {
		w, err := strconv.ParseFloat(string(data), 64)
		if err != nil {
			return nil, 0, fmt.Errorf("power document %q: want a number of watts or a JSON object", clip(data))
		}
		return nil, w, checkWatts("node", w)
	}
	var doc powerDoc
	d := json.NewDecoder(bytes.NewReader(data))
	d.DisallowUnknownFields()
	if err := d.Decode(&doc); err != nil {
		return nil, 0, fmt.Errorf("power document: %w", err)
	}
	if doc.NodeW == nil && len(doc.GPUs) == 0 {
		return nil, 0, errors.New(`power document: neither "node_w" nor "gpus"`)
	}
	w := 0.0
	if doc.NodeW != nil {
		w = *doc.NodeW
		if err := checkWatts("node_w", w); err != nil {
			return nil, 0, err
		}
	}
	for _, g := range doc.GPUs {
		if err := checkWatts(fmt.Sprintf("GPU %d", g.Index), g.Watts); err != nil {
			return nil, 0, err
		}
	}
	return doc.GPUs, w, nil
}

// checkWatts rejects a negative or non-finite reading.
func checkWatts(what string, w float64) error {
	if math.IsNaN(w) || math.IsInf(w, 0) || w < 0 {
		return fmt.Errorf("power document: %s: %v is not a number of watts ≥ 0", what, w)
	}
	return nil
}

// clip shortens a document for an error message.
func clip(b []byte) string {
	if len(b) > 40 {
		return string(b[:40]) + "…"
	}
	return string(b)
}

// FilePower reads the node's power from a file holding a power document
// (ParsePowerDoc), read again at every reading; whoever writes it (a BMC
// exporter, a test) should replace it atomically (write and rename).
type FilePower struct {
	Path string
}

// Sample implements PowerSampler.
func (f *FilePower) Sample(context.Context) ([]api.GPUPower, float64, error) {
	data, err := os.ReadFile(f.Path)
	if err != nil {
		return nil, 0, fmt.Errorf("power file: %w", err)
	}
	gpus, w, err := ParsePowerDoc(data)
	if err != nil {
		return nil, 0, fmt.Errorf("power file %s: %w", f.Path, err)
	}
	return gpus, w, nil
}

// HTTPPower reads the node's power from an HTTP endpoint: a GET of URL with
// the query parameters node (the node's name) and load (its load, busy
// GPUs over GPUs), answered with a power document (ParsePowerDoc) and 200.
// An endpoint that measures ignores the parameters; one that models the
// draw (a test's fake meter, a site's power model) uses them.
type HTTPPower struct {
	URL  string
	Node string
	// Client makes the request; nil: http.DefaultClient (the context
	// bounds the request).
	Client *http.Client
}

// Sample implements PowerSampler (load unknown: the parameter is left out).
func (h *HTTPPower) Sample(ctx context.Context) ([]api.GPUPower, float64, error) {
	return h.get(ctx, "")
}

// SampleLoad implements LoadPowerSampler.
func (h *HTTPPower) SampleLoad(ctx context.Context, load float64) ([]api.GPUPower, float64, error) {
	return h.get(ctx, strconv.FormatFloat(load, 'g', 6, 64))
}

func (h *HTTPPower) get(ctx context.Context, load string) ([]api.GPUPower, float64, error) {
	u, err := url.Parse(h.URL)
	if err != nil {
		return nil, 0, fmt.Errorf("power URL %s: %w", h.URL, err)
	}
	q := u.Query()
	q.Set("node", h.Node)
	if load != "" {
		q.Set("load", load)
	}
	u.RawQuery = q.Encode()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return nil, 0, fmt.Errorf("power URL %s: %w", h.URL, err)
	}
	hc := h.Client
	if hc == nil {
		hc = http.DefaultClient
	}
	resp, err := hc.Do(req)
	if err != nil {
		return nil, 0, fmt.Errorf("power URL: %w", err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, maxPowerDoc))
	if err != nil {
		return nil, 0, fmt.Errorf("power URL %s: %w", h.URL, err)
	}
	if resp.StatusCode != http.StatusOK {
		return nil, 0, fmt.Errorf("power URL %s: %s", h.URL, resp.Status)
	}
	gpus, w, err := ParsePowerDoc(data)
	if err != nil {
		return nil, 0, fmt.Errorf("power URL %s: %w", h.URL, err)
	}
	return gpus, w, nil
}
