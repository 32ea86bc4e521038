package client

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"

	"github.com/gpusched/gpusched/service/api"
)

// The EDL primitives of a job (docs/EDL.md): master lock, task queue,
// pserver slots.

// Master returns job id's master role.
func (c *Client) Master(ctx context.Context, id string) (api.Master, error) {
	var m api.Master
	return m, c.edl(ctx, http.MethodGet, id, "/master", nil, http.StatusOK, &m)
}

// AcquireMaster takes, renews or releases job id's master role.
func (c *Client) AcquireMaster(ctx context.Context, id string, r api.MasterRequest) (api.Master, error) {
	var m api.Master
	return m, c.edl(ctx, http.MethodPost, id, "/master", r, http.StatusOK, &m)
}

// RegisterTasks creates job id's task queue.
func (c *Client) RegisterTasks(ctx context.Context, id string, spec api.TaskQueueSpec) (api.TaskQueue, error) {
	var q api.TaskQueue
	return q, c.edl(ctx, http.MethodPost, id, "/tasks", spec, http.StatusCreated, &q)
}

// Tasks returns job id's task queue.
func (c *Client) Tasks(ctx context.Context, id string) (api.TaskQueue, error) {
	var q api.TaskQueue
	return q, c.edl(ctx, http.MethodGet, id, "/tasks", nil, http.StatusOK, &q)
}

// Lease asks for the next task of job id.
func (c *Client) Lease(ctx context.Context, id string, r api.LeaseRequest) (api.Lease, error) {
	var l api.Lease
	return l, c.edl(ctx, http.MethodPost, id, "/tasks/lease", r, http.StatusOK, &l)
}

// Report reports task index of job id done (ok) or failed under lease.
func (c *Client) Report(ctx context.Context, id string, index int, lease string, ok bool) (api.TaskQueue, error) {
	what := "failed"
	if ok {
		what = "done"
	}
	var q api.TaskQueue
	return q, c.edl(ctx, http.MethodPost, id, fmt.Sprintf("/tasks/%d/%s", index, what), api.TaskReport{Lease: lease}, http.StatusOK, &q)
}

// PServers lists job id's pserver slots.
func (c *Client) PServers(ctx context.Context, id string) (api.PServerList, error) {
	var l api.PServerList
	return l, c.edl(ctx, http.MethodGet, id, "/pservers", nil, http.StatusOK, &l)
}

// ClaimPServer claims a pserver slot of job id.
func (c *Client) ClaimPServer(ctx context.Context, id string, r api.PServerClaim) (api.PServer, error) {
	var p api.PServer
	return p, c.edl(ctx, http.MethodPost, id, "/pservers/claim", r, http.StatusOK, &p)
}

// RenewPServer renews (or releases) slot index of job id.
func (c *Client) RenewPServer(ctx context.Context, id string, index int, r api.PServerClaim) (api.PServer, error) {
	var p api.PServer
	return p, c.edl(ctx, http.MethodPost, id, fmt.Sprintf("/pservers/%d/renew", index), r, http.StatusOK, &p)
}

// edl calls an EDL endpoint of job id.
func (c *Client) edl(ctx context.Context, method, id, suffix string, in any, want int, out any) error {
	p, err := jobPath(id, suffix)
	if err != nil {
		return err
	}
	var body []byte
	if in != nil {
		if body, err = json.Marshal(in); err != nil {
			return fmt.Errorf("encode request: %w", err)
		}
	}
	return c.call(ctx, method, p, body, want, out)
}
