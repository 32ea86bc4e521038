package client

import (
	"context"
	"net/http"

	"github.com/gpusched/gpusched/service/api"
)

// Calibration returns the load thresholds in use for every node class and
// algorithm type (GET /v1/calibration).
func (c *Client) Calibration(ctx context.Context) (api.Calibration, error) {
	var out api.Calibration
	err := c.call(ctx, http.MethodGet, "/v1/calibration", nil, http.StatusOK, &out)
	return out, err
}

// Recalibrate asks the server to fit every class and algorithm type with
// enough power samples now and returns the thresholds in use afterwards
// (POST /v1/calibration).
func (c *Client) Recalibrate(ctx context.Context) (api.Calibration, error) {
	var out api.Calibration
	err := c.call(ctx, http.MethodPost, "/v1/calibration", nil, http.StatusOK, &out)
	return out, err
}

// Energy returns the energy report (GET /v1/energy).
func (c *Client) Energy(ctx context.Context) (api.EnergyReport, error) {
	var out api.EnergyReport
	err := c.call(ctx, http.MethodGet, "/v1/energy", nil, http.StatusOK, &out)
	return out, err
}

// EnergyReplay returns the pack replay's inputs (GET /v1/energy/replay).
func (c *Client) EnergyReplay(ctx context.Context) (api.EnergyReplay, error) {
	var out api.EnergyReplay
	err := c.call(ctx, http.MethodGet, "/v1/energy/replay", nil, http.StatusOK, &out)
	return out, err
}
