package api

import "time"

// ETA is the forecast of one active job's start and finish (GET
// /v1/jobs/{id}/eta; docs/ETA.md). Times are absent (null) when the
// forecast did not reach them: the job does not fit the cluster as it is,
// or waits behind one that does not (Reason says why).
type ETA struct {
	Job   string `json:"job"`
	State State  `json:"state"`
	// PredictedStart is the point forecast of the job's start (a running
	// job's actual start); PredictedFinish of its finish.
	PredictedStart  *time.Time `json:"predicted_start"`
	PredictedFinish *time.Time `json:"predicted_finish"`
	// StartP10..FinishP90 are the 10th, 50th and 90th percentiles over
	// the perturbed simulations.
	StartP10  *time.Time `json:"start_p10"`
	StartP50  *time.Time `json:"start_p50"`
	StartP90  *time.Time `json:"start_p90"`
	FinishP10 *time.Time `json:"finish_p10"`
	FinishP50 *time.Time `json:"finish_p50"`
	FinishP90 *time.Time `json:"finish_p90"`
	// Reason says why a time is missing.
	Reason string `json:"reason,omitempty"`
	// ForecastAt is the time of the snapshot the forecast started from.
	ForecastAt time.Time `json:"forecast_at"`
	Basis      ETABasis  `json:"basis"`
}

// ETABasis says what a forecast rests on: the job's own length and speed,
// the uncertainty applied to lengths of its kind, and the lengths of all
// the jobs the simulation ran.
type ETABasis struct {
	// Length is where the job's length comes from: steps, time-limit,
	// user-history, history or default; Speed, for steps, measured or
	// matrix.
	Length string `json:"length"`
	Speed  string `json:"speed,omitempty"`
	// RemainingS is the job's remaining run time on its current GPUs
	// (running) or its length (waiting), in seconds, when it is a time;
	// RemainingSteps its steps left when the simulator runs it at its
	// matrix speed.
	RemainingS     float64 `json:"remaining_s,omitempty"`
	RemainingSteps float64 `json:"remaining_steps,omitempty"`
	// Detail says it in words.
	Detail string `json:"detail"`
	// Bias and Sigma are the mean and standard deviation of the log of
	// actual over estimated run time for lengths of this class (its kind,
	// and for steps its speed), learned from Samples finished jobs (0: the
	// prior).
	Bias    float64 `json:"bias"`
	Sigma   float64 `json:"sigma"`
	Samples int     `json:"samples"`
	// Runs is the number of perturbed simulations behind the percentiles.
	Runs int `json:"runs"`
	// Policy, Placer and Scaler are the stages simulated (the service's).
	Policy string `json:"policy"`
	Placer string `json:"placer"`
	Scaler string `json:"scaler"`
	// Jobs counts the active jobs of the forecast by length kind.
	Jobs map[string]int `json:"jobs"`
}

// ETAList is the answer of GET /v1/eta: the forecast of every active job,
// oldest first.
type ETAList struct {
	ETAs []ETA `json:"etas"`
}

// ETAAccuracy is the answer of GET /v1/eta/accuracy: how good the start
// forecasts served so far have been, over all of them and by how far
// ahead they were made, and the spread of every class of lengths.
type ETAAccuracy struct {
	ETAStats
	ByLead  []ETALeadStats  `json:"by_lead"`
	Spreads []ETASpread     `json:"spreads"`
	Recent  []ETAPrediction `json:"recent,omitempty"`
}

// ETAStats summarizes predicted against actual starts.
type ETAStats struct {
	// Jobs and Predictions count the jobs that started and the
	// predictions served for them while they waited.
	Jobs        int `json:"jobs"`
	Predictions int `json:"predictions"`
	// MeanAbsErrorS, MedianAbsErrorS and P90AbsErrorS are absolute
	// errors of the predicted start, BiasS the mean of actual − predicted.
	MeanAbsErrorS   float64 `json:"mean_abs_error_s"`
	MedianAbsErrorS float64 `json:"median_abs_error_s"`
	P90AbsErrorS    float64 `json:"p90_abs_error_s"`
	BiasS           float64 `json:"bias_s"`
	// InRange is the share of actual starts within [P10, P90]; Within10
	// the share within 10% of the lead time or 5 s of the prediction.
	InRange  float64 `json:"in_range"`
	Within10 float64 `json:"within_10pct"`
}

// ETALeadStats are the stats of the predictions made between MinS and
// MaxS seconds (0: no bound) before the start.
type ETALeadStats struct {
	MinS float64 `json:"min_lead_s"`
	MaxS float64 `json:"max_lead_s,omitempty"`
	ETAStats
}

// ETASpread is the uncertainty of one class of lengths: a length kind,
// steps split by the source of the speed (steps/measured, steps/matrix).
type ETASpread struct {
	Class   string  `json:"class"`
	Bias    float64 `json:"bias"`
	Sigma   float64 `json:"sigma"`
	Samples int     `json:"samples"`
}

// ETAPrediction is one served prediction and the actual start.
type ETAPrediction struct {
	Job       string    `json:"job"`
	At        time.Time `json:"at"`
	Predicted time.Time `json:"predicted_start"`
	P10       time.Time `json:"start_p10"`
	P90       time.Time `json:"start_p90"`
	Actual    time.Time `json:"actual_start"`
	ErrorS    float64   `json:"error_s"`
}
