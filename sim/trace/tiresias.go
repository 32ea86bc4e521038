package trace

import (
	"io"
	"math"

	"github.com/gpusched/gpusched/core/model"
)

// Tiresias's columns, in order.
const (
	tiresiasID = iota
	tiresiasGPUs
	tiresiasSubmit
	tiresiasIterations
	tiresiasModel
	tiresiasDuration
	tiresiasInterval
	tiresiasColumns
)

// readTiresias reads a Tiresias CSV (header tiresiasHeader).
func readTiresias(r io.Reader, name string) ([]model.JobSpec, error) {
	jobs, lines, err := readSpecs(r, name, tiresiasHeader, ',', tiresiasColumns, tiresiasJob)
	if err != nil {
		return nil, err
	}
	return finish(name, jobs, lines)
}

// tiresiasJob converts the columns of one Tiresias line. iterations and
// interval are checked but not kept: the model names are not keys of the
// throughput matrix, so an iteration count could not be turned into time, and
// the duration is what the trace measured.
func tiresiasJob(l *lines, cols [][]byte) (model.JobSpec, error) {
	var spec model.JobSpec
	var err error
	if spec.ID, err = l.nonEmpty("job_id", cols[tiresiasID]); err != nil {
		return spec, err
	}
	if spec.GPUs, err = l.gpus("num_gpu", cols[tiresiasGPUs]); err != nil {
		return spec, err
	}
	spec.MinGPUs, spec.MaxGPUs = spec.GPUs, spec.GPUs
	if spec.Submit, err = l.seconds("submit_time", cols[tiresiasSubmit]); err != nil {
		return spec, err
	}
	if _, err = l.integer("iterations", cols[tiresiasIterations], 0, math.MaxInt64); err != nil {
		return spec, err
	}
	if spec.Model, err = l.nonEmpty("model_name", cols[tiresiasModel]); err != nil {
		return spec, err
	}
	if spec.Duration, err = l.seconds("duration", cols[tiresiasDuration]); err != nil {
		return spec, err
	}
	spec.Duration = atLeastOneMilli(spec.Duration)
	_, err = l.seconds("interval", cols[tiresiasInterval])
	return spec, err
}
