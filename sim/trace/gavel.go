package trace

import (
	"io"
	"math"

	"github.com/gpusched/gpusched/core/model"
)

// Gavel's columns, in order.
const (
	gavelJobType = iota
	gavelCommand
	gavelWorkDir
	gavelStepsArg
	gavelNeedsData
	gavelTotalSteps
	gavelScale
	gavelPriority
	gavelSLO
	gavelArrival
)

// readGavel reads a Gavel trace: no header, one job per line, ten
// tab-separated columns (see the package documentation).
func readGavel(r io.Reader, name string) ([]model.JobSpec, error) {
	jobs, lines, err := readSpecs(r, name, "", '\t', gavelColumns, gavelJob)
	if err != nil {
		return nil, err
	}
	for i, id := range indexIDs(len(jobs)) {
		jobs[i].ID = id
	}
	return finish(name, jobs, lines)
}

// gavelJob converts the columns of one Gavel line. The command, working
// directory and step-argument columns are not used; needs_data_dir and SLO
// must still be numbers.
func gavelJob(l *lines, cols [][]byte) (model.JobSpec, error) {
	var spec model.JobSpec
	var err error
	if spec.Model, err = l.nonEmpty("job_type", cols[gavelJobType]); err != nil {
		return spec, err
	}
	if _, err = l.integer("needs_data_dir", cols[gavelNeedsData], 0, 1); err != nil {
		return spec, err
	}
	if spec.Steps, err = l.integer("total_steps", cols[gavelTotalSteps], 1, math.MaxInt64); err != nil {
		return spec, err
	}
	if spec.GPUs, err = l.gpus("scale_factor", cols[gavelScale]); err != nil {
		return spec, err
	}
	spec.MinGPUs, spec.MaxGPUs = spec.GPUs, spec.GPUs
	weight, err := l.number("priority_weight", cols[gavelPriority], 0, math.MaxInt32)
	if err != nil {
		return spec, err
	}
	if weight == 0 {
		return spec, l.fail("priority_weight 0 is not positive")
	}
	spec.Priority = int(weight)
	if _, err = l.number("SLO", cols[gavelSLO], -math.MaxFloat64, math.MaxFloat64); err != nil {
		return spec, err
	}
	spec.Submit, err = l.seconds("arrival_time", cols[gavelArrival])
	return spec, err
}
