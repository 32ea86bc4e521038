package cli

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/gpusched/gpusched/service/api"
)

// submitOptions are the flags of `gpusched submit`.
type submitOptions struct {
	clientOptions
	name, gpuType, model, user, workdir, grace string
	queue                                      string
	gpus, minGPUs, maxGPUs, priority           int
	env                                        []string
	// timeLimit (--time) and totalSteps (--total-steps) give the
	// forecast a length (docs/ETA.md).
	timeLimit  string
	totalSteps int64
	// dataEndpoint (--data-endpoint) is where the job's data lives
	// (docs/ENERGY.md, "Measured distance").
	dataEndpoint string
	// cpus, memory (--cpus, --memory) and resources (--resource
	// NAME=N, repeatable) are what each GPU of the job needs of its node.
	cpus, memory string
	resources    []string
	// given reports whether a flag was set on the command line.
	given func(flag string) bool
}

func newSubmitCommand() *cobra.Command {
	o := &submitOptions{}
	cmd := &cobra.Command{
		Use:   "submit (FILE.yaml | --gpus K [flags] -- COMMAND ARGS...)",
		Short: "Submit a job and print its ID",
		Long: "submit sends a job to the scheduler service and prints the new job's ID (and\n" +
			"nothing else, for scripts; -o json|yaml prints the whole job). The job is read\n" +
			"from a YAML spec file (docs/CLI.md; - reads standard input) or built from flags\n" +
			"and the command after --, which is passed as argv, without a shell.\n\n" +
			"--cpus, --memory and --resource say what each GPU of the job needs of its\n" +
			"node besides the GPU: a job on k GPUs of a node holds k times as much there.\n" +
			"A job that no registered node could hold is refused, naming the resource and\n" +
			"the largest node (docs/SERVER.md, \"Resources besides GPUs\").",
		Example: "  gpusched submit testdata/jobs/example.yaml\n" +
			"  gpusched submit --name resnet --gpus 4 --min-gpus 2 --max-gpus 8 -- python train.py --lr 0.1\n" +
			"  gpusched submit --gpus 1 --env NCCL_DEBUG=INFO -- sh -c 'nvidia-smi; echo hi'\n" +
			"  gpusched submit --gpus 2 --time 2h --total-steps 50000 --model CycleGAN -- python train.py\n" +
			"  gpusched submit --gpus 4 --cpus 8 --memory 64Gi --resource rdma/hca=1 -- torchrun train.py\n" +
			"  id=$(gpusched submit job.yaml) && gpusched logs -f \"$id\"",
		RunE: func(cmd *cobra.Command, args []string) error { return runSubmit(cmd, o, args) },
	}
	addClientFlags(cmd, &o.clientOptions)
	f := cmd.Flags()
	o.given = func(name string) bool { return f.Changed(name) }
	f.StringVar(&o.name, "name", "", "job name (default: the program's base name)")
	f.IntVar(&o.gpus, "gpus", 0, "requested GPU count (required with a command)")
	f.IntVar(&o.minGPUs, "min-gpus", 0, "elastic job: fewest GPUs it runs on (default: --gpus)")
	f.IntVar(&o.maxGPUs, "max-gpus", 0, "elastic job: most GPUs it can use (default: --gpus)")
	f.IntVar(&o.priority, "priority", 0, "priority, higher is more important")
	f.StringVar(&o.gpuType, "gpu-type", "", "run only on this GPU type, e.g. v100")
	f.StringVar(&o.model, "model", "", "job type for throughput profiles, e.g. \"ResNet-50 (batch size 64)\"")
	f.StringVar(&o.user, "user", "", "owner of the job (with authentication: yourself, unless you are an admin)")
	f.StringVar(&o.queue, "queue", "", "the team queue (docs/QUEUES.md; default: your first queue, else the default queue)")
	f.StringArrayVar(&o.env, "env", nil, "environment variable K=V for every replica (repeatable)")
	f.StringVar(&o.workdir, "workdir", "", "working directory of the replicas on their nodes")
	f.StringVar(&o.grace, "grace-period", "", "time between SIGTERM and SIGKILL when the job is stopped: seconds or a duration like 2m (default 30s)")
	f.StringVar(&o.timeLimit, "time", "", "time limit, like Slurm's --time: 2h, 90m, or [D-]HH:MM:SS, MM:SS, MM (minutes); past it the job is stopped and fails")
	f.Int64Var(&o.totalSteps, "total-steps", 0, "total training steps of the job: with its progress reports, its length for forecasts (gpusched eta)")
	f.StringVar(&o.cpus, "cpus", "", "CPUs each GPU of the job needs on its node: cores (8, 0.5) or millicores (500m)")
	f.StringVar(&o.memory, "memory", "", "host memory each GPU of the job needs on its node, e.g. 64Gi, 512Mi (bytes without a suffix)")
	f.StringArrayVar(&o.resources, "resource", nil, "a named resource each GPU of the job needs on its node, NAME=N, e.g. rdma/hca=1 (repeatable)")
	f.StringVar(&o.dataEndpoint, "data-endpoint", "", "where the job's data lives, host:port or an http(s) URL: agents measure their distance to it and the energy placer prefers the nearest nodes")
	return cmd
}

func runSubmit(cmd *cobra.Command, o *submitOptions, args []string) error {
	spec, err := o.spec(args, cmd.ArgsLenAtDash(), cmd.InOrStdin())
	if err != nil {
		return err
	}
	c, err := o.connect()
	if err != nil {
		return err
	}
	ctx, cancel := callContext(cmd)
	defer cancel()
	j, err := c.Submit(ctx, spec)
	if err != nil {
		return clientError(err, "")
	}
	if o.output != outTable {
		return writeValue(cmd.OutOrStdout(), o.output, j)
	}
	_, err = fmt.Fprintln(cmd.OutOrStdout(), j.ID)
	return err
}

// spec returns the job spec from the spec file or from the flags and the
// command after -- (dash is the index of -- in args, -1 without one).
func (o *submitOptions) spec(args []string, dash int, stdin io.Reader) (api.JobSpec, error) {
	if dash < 0 {
		// The flags that describe a job cannot be combined with a file.
		for _, name := range []string{"name", "gpus", "min-gpus", "max-gpus", "priority", "gpu-type",
			"model", "user", "queue", "env", "workdir", "grace-period", "time", "total-steps",
			"cpus", "memory", "resource"} {
			if o.given(name) {
				return api.JobSpec{}, badInput("submit: --%s cannot be combined with a spec file; "+
					"to run a command, put it after --: gpusched submit --gpus K -- COMMAND ARGS...", name)
			}
		}
		if len(args) != 1 {
			return api.JobSpec{}, badInput("submit: want a spec file (gpusched submit job.yaml) " +
				"or a command after -- (gpusched submit --gpus 1 -- python train.py)")
		}
		return readSpecFile(args[0], stdin)
	}
	if dash > 0 {
		return api.JobSpec{}, badInput("submit: %q before --: give either a spec file or a command after --", args[0])
	}
	return o.flagSpec(args)
}

// readSpecFile decodes a YAML spec file ("-": standard input); errors name
// the file.
func readSpecFile(path string, stdin io.Reader) (api.JobSpec, error) {
	var data []byte
	var err error
	if path == "-" {
		data, err = io.ReadAll(io.LimitReader(stdin, api.MaxBodyBytes+1))
	} else {
		data, err = os.ReadFile(path)
	}
	if err != nil {
		return api.JobSpec{}, badInput("submit: %w", err)
	}
	spec, err := api.DecodeSpecYAML(data)
	if err != nil {
		return api.JobSpec{}, badInput("%s: %w", path, err)
	}
	return spec, nil
}

// flagSpec builds the spec from the flags and the command.
func (o *submitOptions) flagSpec(command []string) (api.JobSpec, error) {
	if len(command) == 0 {
		return api.JobSpec{}, badInput("submit: no command after --")
	}
	if !o.given("gpus") {
		return api.JobSpec{}, badInput("submit: --gpus K is required with a command")
	}
	s := api.JobSpec{Name: o.name, Command: command, GPUs: o.gpus, GPUType: o.gpuType, Model: o.model,
		Priority: o.priority, User: o.user, Queue: o.queue, Workdir: o.workdir}
	if s.Name == "" {
		s.Name = filepath.Base(command[0])
	}
	if o.given("min-gpus") {
		s.MinGPUs = &o.minGPUs
	}
	if o.given("max-gpus") {
		s.MaxGPUs = &o.maxGPUs
	}
	env, err := parseEnv(o.env)
	if err != nil {
		return api.JobSpec{}, err
	}
	s.Env = env
	if o.given("grace-period") {
		g, err := parseGrace(o.grace)
		if err != nil {
			return api.JobSpec{}, badInput("--grace-period %q: %w", o.grace, err)
		}
		s.GracePeriodS = &g
	}
	if o.given("time") {
		limit, err := parseTimeLimit(o.timeLimit)
		if err != nil {
			return api.JobSpec{}, badInput("--time %q: %w", o.timeLimit, err)
		}
		s.TimeLimitS = limit
	}
	s.TotalSteps = o.totalSteps
	s.DataEndpoint = o.dataEndpoint
	s.CPUs, s.Memory = api.Quantity(o.cpus), api.Quantity(o.memory)
	if s.Resources, err = parseResourceFlags(o.resources); err != nil {
		return api.JobSpec{}, err
	}
	if err := s.Validate(); err != nil {
		return api.JobSpec{}, badInput("submit: %s", flagMessage(err))
	}
	return s, nil
}

// parseEnv turns repeated K=V flags into a map; a duplicate is an error.
func parseEnv(kvs []string) (map[string]string, error) {
	if len(kvs) == 0 {
		return nil, nil
	}
	env := make(map[string]string, len(kvs))
	for _, kv := range kvs {
		k, v, ok := strings.Cut(kv, "=")
		if !ok || k == "" {
			return nil, badInput("--env %q: want NAME=VALUE", kv)
		}
		if _, dup := env[k]; dup {
			return nil, badInput("--env %s given twice", k)
		}
		env[k] = v
	}
	return env, nil
}

// parseResourceFlags turns repeated --resource NAME=N flags into the
// spec's resources; a name given twice is an error.
func parseResourceFlags(kvs []string) (map[string]api.Quantity, error) {
	if len(kvs) == 0 {
		return nil, nil
	}
	out := make(map[string]api.Quantity, len(kvs))
	for _, kv := range kvs {
		k, v, ok := strings.Cut(kv, "=")
		if !ok || k == "" || v == "" {
			return nil, badInput("--resource %q: want NAME=N, e.g. rdma/hca=1", kv)
		}
		if _, dup := out[k]; dup {
			return nil, badInput("--resource %s given twice", k)
		}
		out[k] = api.Quantity(v)
	}
	return out, nil
}

// parseGrace reads whole seconds: "45" or a duration like "2m", "1m30s".
func parseGrace(s string) (int, error) {
	if n, err := strconv.Atoi(s); err == nil {
		return n, nil
	}
	d, err := time.ParseDuration(s)
	if err != nil {
		return 0, errors.New("want seconds or a duration like 2m")
	}
	if d%time.Second != 0 {
		return 0, errors.New("want whole seconds")
	}
	return int(d / time.Second), nil
}

// flagMessage names the flag behind a spec field in a validation error:
// "min_gpus: ..." becomes "--min-gpus: ...".
func flagMessage(err error) string {
	fe, ok := errors.AsType[*api.FieldError](err)
	if !ok || fe.Field == "" {
		return err.Error()
	}
	field, _, _ := strings.Cut(fe.Field, ".")
	field, _, _ = strings.Cut(field, "[")
	switch field {
	case "command":
		return fe.Error()
	case "grace_period_s":
		field = "grace_period"
	case "time_limit_s":
		field = "time"
	case "resources":
		if name, ok := strings.CutPrefix(fe.Field, "resources."); ok {
			return "--resource " + name + ": " + fe.Message
		}
		field = "resource"
	}
	return "--" + strings.ReplaceAll(field, "_", "-") + ": " + fe.Message
}
