package api

import "time"

// Progress is a job's report of its training progress: POST
// /v1/jobs/{id}/progress, or a line of its progress file
// (GPUSCHED_PROGRESS_FILE, docs/AGENT.md), which the agent forwards.
type Progress struct {
	// Steps is the number of training steps done so far, ≥ 0. After a
	// restart from a checkpoint it starts again from the checkpoint's steps.
	Steps int64 `json:"steps"`
	// Checkpoint says that a checkpoint of the state at Steps was just
	// written: a restart would resume from it.
	Checkpoint bool `json:"checkpoint,omitempty"`
}

// progressWire is Progress as it is decoded: steps is required.
type progressWire struct {
	Steps      *int64 `json:"steps"`
	Checkpoint bool   `json:"checkpoint"`
}

// Validate reports a problem with p as a *FieldError.
func (p *Progress) Validate() error {
	if p.Steps < 0 {
		return fieldErr("steps", "%d: want a number of steps ≥ 0", p.Steps)
	}
	return nil
}

// DecodeProgress reads one JSON progress report from data, rejecting
// unknown fields, wrong types and trailing data; steps is required.
func DecodeProgress(data []byte) (Progress, error) {
	var w progressWire
	if err := decodeStrict(data, &w); err != nil {
		return Progress{}, err
	}
	if w.Steps == nil {
		return Progress{}, fieldErr("steps", "is required: the number of training steps done so far")
	}
	p := Progress{Steps: *w.Steps, Checkpoint: w.Checkpoint}
	if err := p.Validate(); err != nil {
		return Progress{}, err
	}
	return p, nil
}

// ReplicaProgress is the latest progress an agent read from a replica's
// progress file, sent with the replica's status. The times are when the
// agent read the lines; the server keeps a report only if it is newer than
// what it has, so a report sent again changes nothing.
type ReplicaProgress struct {
	// Steps is the latest line's steps, read at At.
	Steps int64     `json:"steps"`
	At    time.Time `json:"at"`
	// CheckpointSteps is the steps of the latest line that announced a
	// checkpoint, read at CheckpointAt; nil CheckpointAt when none did.
	CheckpointSteps int64      `json:"checkpoint_steps,omitempty"`
	CheckpointAt    *time.Time `json:"checkpoint_at,omitempty"`
}
