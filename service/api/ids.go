package api

import (
	"strconv"
	"strings"
)

// Job IDs are "j<N>" (N from 1, the job's submission number) and replica
// IDs "<job>.<attempt>.<rank>" (attempt from 1, the node rank from 0).

// ParseJobID returns the number of a job ID "j<N>".
func ParseJobID(id string) (int, bool) {
	n, err := strconv.Atoi(strings.TrimPrefix(id, "j"))
	if err != nil || !strings.HasPrefix(id, "j") || n < 1 || "j"+strconv.Itoa(n) != id {
		return 0, false
	}
	return n, true
}

// ReplicaID returns the ID of a job's replica on node rank rank of attempt.
func ReplicaID(job string, attempt, rank int) string {
	return job + "." + strconv.Itoa(attempt) + "." + strconv.Itoa(rank)
}

// ParseReplicaID splits "<job>.<attempt>.<rank>".
func ParseReplicaID(id string) (job string, attempt, rank int, ok bool) {
	parts := strings.Split(id, ".")
	if len(parts) != 3 {
		return "", 0, 0, false
	}
	if _, ok := ParseJobID(parts[0]); !ok {
		return "", 0, 0, false
	}
	a, err1 := strconv.Atoi(parts[1])
	r, err2 := strconv.Atoi(parts[2])
	if err1 != nil || err2 != nil || a < 1 || r < 0 || ReplicaID(parts[0], a, r) != id {
		return "", 0, 0, false
	}
	return parts[0], a, r, true
}
