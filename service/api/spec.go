package api

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"reflect"
	"regexp"
	"strings"

	"sigs.k8s.io/yaml"
)

// MaxBodyBytes is the largest request body the server reads (1 MiB); a
// larger one is answered with 413.
const MaxBodyBytes = 1 << 20

// DefaultGracePeriodS is a job's grace period between SIGTERM and SIGKILL
// when its spec gives none.
const DefaultGracePeriodS = 30

// Limits on a spec's sizes, so that one request cannot make the store hold
// unbounded data.
const (
	MaxGPUs        = 4096
	MaxNameLen     = 253
	MaxArgs        = 4096
	MaxEnvVars     = 1024
	MaxGracePeriod = 24 * 3600
	// MaxTimeLimit bounds a job's time limit (time_limit_s): one year.
	MaxTimeLimit = 365 * 24 * 3600
)

// JobSpec is what a user submits. Only Command and GPUs are required.
type JobSpec struct {
	// Name is a human-readable name; it need not be unique.
	Name string `json:"name,omitempty"`
	// Command is the program and its arguments (argv, not a shell line).
	Command []string `json:"command"`
	// Env is added to every replica's environment.
	Env map[string]string `json:"env,omitempty"`
	// Workdir is the replicas' working directory on the node.
	Workdir string `json:"workdir,omitempty"`
	// GPUs is the requested GPU count, ≥ 1.
	GPUs int `json:"gpus"`
	// MinGPUs and MaxGPUs bound an elastic job; nil means GPUs.
	MinGPUs *int `json:"min_gpus,omitempty"`
	MaxGPUs *int `json:"max_gpus,omitempty"`
	// GPUType restricts the job to one GPU type, e.g. "v100".
	GPUType string `json:"gpu_type,omitempty"`
	// Model names the job type for throughput profiles, e.g.
	// "ResNet-50 (batch size 64)".
	Model string `json:"model,omitempty"`
	// Priority: higher is more important.
	Priority int `json:"priority,omitempty"`
	// User owns the job. With authentication the server sets it to the
	// caller; only an admin may name another user.
	User string `json:"user,omitempty"`
	// Queue names the team queue the job belongs to (docs/QUEUES.md);
	// empty: the user's first queue, else the default queue.
	Queue string `json:"queue,omitempty"`
	// GracePeriodS is the time between SIGTERM and SIGKILL when the job is
	// stopped; nil means DefaultGracePeriodS.
	GracePeriodS *int `json:"grace_period_s,omitempty"`
	// TimeLimitS is the job's time limit in seconds, like Slurm's --time:
	// an attempt that runs longer is stopped (SIGTERM, then SIGKILL after
	// the grace period) and fails. 0 means none. A forecast takes it as
	// the job's length when nothing better is known (docs/ETA.md).
	TimeLimitS int `json:"time_limit_s,omitempty"`
	// TotalSteps is the job's total training steps, 0 when unknown. With
	// the steps it reports (progress) and its speed (measured, or the
	// throughput matrix for its model) it gives the job's length to the
	// forecast (docs/ETA.md).
	TotalSteps int64 `json:"total_steps,omitempty"`
	// DataEndpoint is where the job's training data lives, as "host:port"
	// or an http(s) URL (seed 002): agents measure their round-trip time
	// to it and the energy placer prefers the nearest nodes
	// (docs/ENERGY.md, "Measured distance"). Empty: none.
	DataEndpoint string `json:"data_endpoint,omitempty"`
	// CPUs is what each GPU of the job needs of its node's CPUs, in cores
	// (2, 0.5) or Kubernetes quantity syntax ("500m"): a job on k GPUs of
	// a node holds k times as much there. Empty: none.
	CPUs Quantity `json:"cpus,omitempty"`
	// Memory is what each GPU of the job needs of its node's memory, in
	// bytes or with a suffix ("64Gi", "512Mi"), held like CPUs. Empty:
	// none.
	Memory Quantity `json:"memory,omitempty"`
	// Resources are what each GPU of the job needs of its node's named
	// resources (extended resources an agent offers with --resource, e.g.
	// "rdma/hca": 1), held like CPUs. Not cpu or memory, which have fields
	// of their own.
	Resources map[string]Quantity `json:"resources,omitempty"`
}

// Min returns the job's minimum GPU count.
func (s *JobSpec) Min() int {
	if s.MinGPUs != nil {
		return *s.MinGPUs
	}
	return s.GPUs
}

// Max returns the job's maximum GPU count.
func (s *JobSpec) Max() int {
	if s.MaxGPUs != nil {
		return *s.MaxGPUs
	}
	return s.GPUs
}

// Grace returns the job's grace period in seconds.
func (s *JobSpec) Grace() int {
	if s.GracePeriodS != nil {
		return *s.GracePeriodS
	}
	return DefaultGracePeriodS
}

var envName = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

// Validate reports the first problem with s as a *FieldError.
func (s *JobSpec) Validate() error {
	if err := s.validateCommand(); err != nil {
		return err
	}
	if err := s.validateGPUs(); err != nil {
		return err
	}
	if len(s.Name) > MaxNameLen {
		return fieldErr("name", "longer than %d bytes", MaxNameLen)
	}
	if strings.ContainsAny(s.Name, "\x00\n\r") {
		return fieldErr("name", "must not contain control characters")
	}
	if len(s.Env) > MaxEnvVars {
		return fieldErr("env", "more than %d variables", MaxEnvVars)
	}
	for k, v := range s.Env {
		if !envName.MatchString(k) {
			return fieldErr("env", "%q is not a valid variable name", k)
		}
		if strings.ContainsRune(v, 0) {
			return fieldErr("env."+k, "value contains a NUL byte")
		}
	}
	if strings.ContainsRune(s.Workdir, 0) {
		return fieldErr("workdir", "contains a NUL byte")
	}
	if s.User != "" {
		if err := CheckName(s.User); err != nil {
			return fieldErr("user", "%s", err.(*FieldError).Message)
		}
	}
	if s.Queue != "" {
		if err := CheckName(s.Queue); err != nil || strings.Contains(s.Queue, "@") || len(s.Queue) > 63 {
			return fieldErr("queue", "%q: want a queue name (letters, digits, '.', '_', '-')", s.Queue)
		}
	}
	if g := s.GracePeriodS; g != nil && (*g < 0 || *g > MaxGracePeriod) {
		return fieldErr("grace_period_s", "%d: want 0..%d", *g, MaxGracePeriod)
	}
	if s.TimeLimitS < 0 || s.TimeLimitS > MaxTimeLimit {
		return fieldErr("time_limit_s", "%d: want 0 (none) or 1..%d seconds", s.TimeLimitS, MaxTimeLimit)
	}
	if s.TotalSteps < 0 {
		return fieldErr("total_steps", "%d: want 0 (unknown) or more", s.TotalSteps)
	}
	if s.DataEndpoint != "" {
		if err := CheckEndpoint(s.DataEndpoint); err != nil {
			return fieldErr("data_endpoint", "%v", err)
		}
	}
	_, err := s.Requests()
	return err
}

func (s *JobSpec) validateCommand() error {
	switch {
	case len(s.Command) == 0:
		return fieldErr("command", "is required: the program and its arguments, e.g. [\"python\", \"train.py\"]")
	case s.Command[0] == "":
		return fieldErr("command", "the program (first element) is empty")
	case len(s.Command) > MaxArgs:
		return fieldErr("command", "more than %d arguments", MaxArgs)
	}
	for i, a := range s.Command {
		if strings.ContainsRune(a, 0) {
			return fieldErr(fmt.Sprintf("command[%d]", i), "contains a NUL byte")
		}
	}
	return nil
}

func (s *JobSpec) validateGPUs() error {
	if s.GPUs < 1 || s.GPUs > MaxGPUs {
		return fieldErr("gpus", "%d: want 1..%d", s.GPUs, MaxGPUs)
	}
	if m := s.MinGPUs; m != nil && (*m < 1 || *m > s.GPUs) {
		return fieldErr("min_gpus", "%d: want 1..gpus (%d)", *m, s.GPUs)
	}
	if m := s.MaxGPUs; m != nil && (*m < s.GPUs || *m > MaxGPUs) {
		return fieldErr("max_gpus", "%d: want gpus (%d)..%d", *m, s.GPUs, MaxGPUs)
	}
	if s.Min() > s.Max() {
		return fieldErr("min_gpus", "%d is above max_gpus %d", s.Min(), s.Max())
	}
	return nil
}

// DecodeSpec reads one JSON job spec from data, rejecting unknown fields,
// wrong types and trailing data, and validates it.
func DecodeSpec(data []byte) (JobSpec, error) {
	var s JobSpec
	if err := decodeStrict(data, &s); err != nil {
		return JobSpec{}, err
	}
	if len(s.Resources) == 0 {
		s.Resources = nil // as it encodes: absent
	}
	if err := s.Validate(); err != nil {
		return JobSpec{}, err
	}
	return s, nil
}

// DecodeSpecYAML reads a job spec written as YAML (or JSON, a subset) with
// the same field names and rules as DecodeSpec.
func DecodeSpecYAML(data []byte) (JobSpec, error) {
	j, err := yaml.YAMLToJSONStrict(data)
	if err != nil {
		return JobSpec{}, &FieldError{Message: "not valid YAML: " + strings.TrimPrefix(err.Error(), "error converting YAML to JSON: ")}
	}
	return DecodeSpec(j)
}

// Decode reads one JSON object from data into v (a pointer to a struct)
// with DecodeSpec's rules: unknown, case-mismatched or repeated keys, wrong
// types and trailing data are *FieldError. It does not validate.
func Decode(data []byte, v any) error { return decodeStrict(data, v) }

// decodeStrict decodes one JSON object into v, turning the decoder's errors
// into *FieldError where a field is known.
func decodeStrict(data []byte, v any) error {
	d := json.NewDecoder(bytes.NewReader(data))
	d.DisallowUnknownFields()
	if err := d.Decode(v); err != nil {
		return jsonFieldError(err)
	}
	if _, err := d.Token(); err != io.EOF {
		return &FieldError{Message: "trailing data after the JSON object"}
	}
	return checkKeys(data, reflect.TypeOf(v).Elem())
}

// checkKeys rejects what encoding/json lets through: top-level keys that
// match a field only without regard to case ("GPUS") and keys given twice.
// data is known to hold one valid JSON object.
func checkKeys(data []byte, t reflect.Type) error {
	known := make(map[string]bool, t.NumField())
	for f := range t.Fields() {
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		known[name] = true
	}
	d := json.NewDecoder(bytes.NewReader(data))
	seen := make(map[string]bool, len(known))
	if _, err := d.Token(); err != nil { // the opening brace
		return jsonFieldError(err)
	}
	for d.More() {
		tok, err := d.Token()
		if err != nil {
			return jsonFieldError(err)
		}
		key, _ := tok.(string)
		switch {
		case !known[key]:
			return &FieldError{Field: key, Message: "unknown field (field names are lower case, e.g. \"gpus\")"}
		case seen[key]:
			return &FieldError{Field: key, Message: "given twice"}
		}
		seen[key] = true
		var skip json.RawMessage
		if err := d.Decode(&skip); err != nil {
			return jsonFieldError(err)
		}
	}
	return nil
}

// jsonFieldError names the field of an encoding/json error.
func jsonFieldError(err error) error {
	if te, ok := errors.AsType[*json.UnmarshalTypeError](err); ok {
		f := te.Field
		if f == "" {
			f = "(body)"
		}
		want := te.Type.String()
		if te.Type == reflect.TypeFor[Quantity]() {
			want = `a number or a quantity such as "500m" or "64Gi"`
		}
		return &FieldError{Field: f, Message: fmt.Sprintf("want %s, got a JSON %s", want, te.Value)}
	}
	msg := err.Error()
	if rest, ok := strings.CutPrefix(msg, "json: unknown field "); ok {
		return &FieldError{Field: strings.Trim(rest, `"`), Message: "unknown field"}
	}
	if errors.Is(err, io.EOF) {
		return &FieldError{Message: "empty body: want a JSON object"}
	}
	return &FieldError{Message: "malformed JSON: " + strings.TrimPrefix(msg, "json: ")}
}
