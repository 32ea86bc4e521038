package machine

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math"
	"net/http"
	"time"

	"github.com/gpusched/gpusched/service/api"
)

const (
	// PowerTimeout bounds one reading of one sampler.
	PowerTimeout = 5 * time.Second
	// maxRedfishBytes bounds a Redfish answer.
	maxRedfishBytes = 1 << 20
)

// ErrNoGPUs is wrapped by every error of GPU discovery that means "this
// machine offers no GPUs to discover" (NVML missing, a binary built
// without cgo, no device), as opposed to a malformed --gpus value.
// Callers that can do without real GPUs (gpusched dev) test for it.
var ErrNoGPUs = errors.New("no GPUs discovered")

// PowerSampler reads a node's power draw: per-GPU readings (NVML), the
// whole node's draw (a BMC through Redfish), or both.
type PowerSampler interface {
	// Sample returns the readings now: GPU readings by device index (nil
	// when the sampler reads none) and the node's watts (0 when it reads
	// none).
	Sample(ctx context.Context) (gpus []api.GPUPower, nodeW float64, err error)
}

// Environment variables with the Redfish credentials (HTTP basic auth).
const (
	EnvRedfishUser     = "GPUSCHED_REDFISH_USER"
	EnvRedfishPassword = "GPUSCHED_REDFISH_PASSWORD"
)

// RedfishPower reads a node's power draw from its BMC: an HTTP GET of a
// Redfish Chassis Power resource (e.g.
// https://bmc/redfish/v1/Chassis/1/Power), whose
// PowerControl[0].PowerConsumedWatts is the node's draw in watts.
type RedfishPower struct {
	// URL is the Power resource.
	URL string
	// User and Password, when User is set, are sent as HTTP basic auth.
	User, Password string
	// Client makes the request; nil: http.DefaultClient (the context
	// bounds the request).
	Client *http.Client
}

// redfishPower is the part of a Redfish Power resource the agent reads.
type redfishPower struct {
	PowerControl []struct {
		PowerConsumedWatts *float64 `json:"PowerConsumedWatts"`
	} `json:"PowerControl"`
}

// Sample implements PowerSampler: the node's watts, no GPU readings.
func (r *RedfishPower) Sample(ctx context.Context) ([]api.GPUPower, float64, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, r.URL, nil)
	if err != nil {
		return nil, 0, fmt.Errorf("redfish %s: %w", r.URL, err)
	}
	req.Header.Set("Accept", "application/json")
	if r.User != "" {
		req.SetBasicAuth(r.User, r.Password)
	}
	hc := r.Client
	if hc == nil {
		hc = http.DefaultClient
	}
	resp, err := hc.Do(req)
	if err != nil {
		return nil, 0, fmt.Errorf("redfish: %w", err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, 0, fmt.Errorf("redfish %s: %s", r.URL, resp.Status)
	}
	var doc redfishPower
	if err := json.NewDecoder(io.LimitReader(resp.Body, maxRedfishBytes)).Decode(&doc); err != nil {
		return nil, 0, fmt.Errorf("redfish %s: decode: %w", r.URL, err)
	}
	if len(doc.PowerControl) == 0 || doc.PowerControl[0].PowerConsumedWatts == nil {
		return nil, 0, fmt.Errorf("redfish %s: no PowerControl[0].PowerConsumedWatts (is it a Chassis Power resource?)", r.URL)
	}
	w := *doc.PowerControl[0].PowerConsumedWatts
	if math.IsNaN(w) || math.IsInf(w, 0) || w < 0 {
		return nil, 0, fmt.Errorf("redfish %s: PowerConsumedWatts %v", r.URL, w)
	}
	return nil, w, nil
}

// PowerSources names the node's power sources besides NVML (which is read
// whenever it is present): its BMC's Redfish Power resource, a power file
// and an HTTP power endpoint (FilePower, HTTPPower). Empty fields are
// unused; NodePlaceholder in File and HTTP is replaced by the node's name.
type PowerSources struct {
	Redfish, File, HTTP string
}

// Samplers returns the samplers of node with gpus: PowerSamplers' (NVML
// and Redfish), then the file's and the HTTP endpoint's. getenv and log
// are as for PowerSamplers.
func (src PowerSources) Samplers(node string, gpus []api.GPU, getenv func(string) string, log *slog.Logger) []PowerSampler {
	out := PowerSamplers(gpus, src.Redfish, getenv, log)
	if src.File != "" {
		out = append(out, &FilePower{Path: ExpandNode(src.File, node)})
	}
	if src.HTTP != "" {
		out = append(out, &HTTPPower{URL: ExpandNode(src.HTTP, node), Node: node, Client: &http.Client{Timeout: PowerTimeout}})
	}
	return out
}

// errNoPower is wrapped by OpenNVMLPower when NVML cannot be used.
var errNoPower = errors.New("no NVML power readings")

// PowerSamplers returns the samplers of a node with gpus: NVML's per-GPU
// readings when NVML is present (otherwise none, said once in log) and,
// with redfishURL, the BMC's. Credentials for Redfish come from
// getenv(EnvRedfishUser) and getenv(EnvRedfishPassword) (pass os.Getenv);
// getenv and log may be nil.
func PowerSamplers(gpus []api.GPU, redfishURL string, getenv func(string) string, log *slog.Logger) []PowerSampler {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	if getenv == nil {
		getenv = func(string) string { return "" }
	}
	var out []PowerSampler
	idx := make([]int, len(gpus))
	for i, g := range gpus {
		idx[i] = g.Index
	}
	if p, err := OpenNVMLPower(idx); err != nil {
		log.Info("no GPU power readings", "why", err)
	} else {
		out = append(out, p)
	}
	if redfishURL != "" {
		out = append(out, &RedfishPower{URL: redfishURL, User: getenv(EnvRedfishUser), Password: getenv(EnvRedfishPassword),
			Client: &http.Client{Timeout: PowerTimeout}})
	}
	return out
}
