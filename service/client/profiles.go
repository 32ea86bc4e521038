package client

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"

	"github.com/gpusched/gpusched/service/api"
)

// maxCSVBytes bounds a node's power-sample CSV (a few hundred rows).
const maxCSVBytes = 16 << 20

// Profiles lists the throughputs the server learned from progress reports
// (online profiles) and, with prerun, the pre-run matrix's points after
// them. The answer is never nil.
func (c *Client) Profiles(ctx context.Context, prerun bool) ([]api.ProfileEntry, error) {
	path := "/v1/profiles"
	if prerun {
		path += "?prerun=true"
	}
	var l api.ProfileList
	if err := c.call(ctx, http.MethodGet, path, nil, http.StatusOK, &l); err != nil {
		return nil, err
	}
	if l.Profiles == nil {
		l.Profiles = []api.ProfileEntry{}
	}
	return l.Profiles, nil
}

// PowerSamples returns a node's power samples as the CSV that gpusched
// calibrate --samples reads (header type,load,power_w,throughput).
func (c *Client) PowerSamples(ctx context.Context, node string) ([]byte, error) {
	if strings.TrimSpace(node) == "" {
		return nil, errors.New("node name is empty")
	}
	p := "/v1/nodes/" + url.PathEscape(node) + "/power-samples"
	resp, err := c.do(ctx, http.MethodGet, p, nil)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, answerError(resp)
	}
	data, err := io.ReadAll(io.LimitReader(resp.Body, maxCSVBytes))
	if err != nil {
		return nil, fmt.Errorf("GET %s: %w", p, err)
	}
	return data, nil
}
