package model

import "strconv"

// CheckpointNote is how every shell describes a job's latest checkpoint in
// the reason of a stop (a preemption, a lost node): the step it was
// written at, and how long before now — ago, which the shells write as
// time.Duration does, rounded to 100 ms ("last checkpoint at step 120,
// 1m2.3s ago"; the core does not import time).
func CheckpointNote(steps int64, ago string) string {
	return "last checkpoint at step " + strconv.FormatInt(steps, 10) + ", " + ago + " ago"
}
