package client

import (
	"context"
	"net/http"

	"github.com/gpusched/gpusched/service/api"
)

// ETA returns the forecast of an active job's start and finish
// (docs/ETA.md); a job that has ended is a *Error with status 409.
func (c *Client) ETA(ctx context.Context, id string) (api.ETA, error) {
	var e api.ETA
	p, err := jobPath(id, "/eta")
	if err == nil {
		err = c.call(ctx, http.MethodGet, p, nil, http.StatusOK, &e)
	}
	return e, err
}

// ETAs returns the forecasts of every active job, oldest first; never nil.
func (c *Client) ETAs(ctx context.Context) ([]api.ETA, error) {
	var l api.ETAList
	if err := c.call(ctx, http.MethodGet, "/v1/eta", nil, http.StatusOK, &l); err != nil {
		return nil, err
	}
	if l.ETAs == nil {
		l.ETAs = []api.ETA{}
	}
	return l.ETAs, nil
}

// ETAAccuracy returns how good the start forecasts have been.
func (c *Client) ETAAccuracy(ctx context.Context) (api.ETAAccuracy, error) {
	var a api.ETAAccuracy
	err := c.call(ctx, http.MethodGet, "/v1/eta/accuracy", nil, http.StatusOK, &a)
	return a, err
}
