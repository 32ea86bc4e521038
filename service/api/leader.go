package api

import "time"

// Leader is the answer of GET /v1/leader: which server leads (schedules,
// talks to agents, takes writes) when several servers share one etcd
// store.
type Leader struct {
	// URL is the leader's advertised URL; empty while no leader is known
	// (an election is under way, or etcd has lost its quorum).
	URL string `json:"url"`
	// Self is true when the server that answered is the leader.
	Self bool `json:"self"`
	// Term is the revision of the leader's election key, which fences its
	// writes; 0 for a single server (no election) or no leader.
	Term int64 `json:"term"`
	// Since is when the answering server learned of this leader.
	Since *time.Time `json:"since,omitempty"`
	// Mode is "single" (one server, its own store) or "ha" (several
	// servers elect a leader on etcd).
	Mode string `json:"mode"`
}
