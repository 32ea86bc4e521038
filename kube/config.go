package kube

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/dynamic"

	"github.com/gpusched/gpusched/core/recipe"
)

// ErrConfig is wrapped by the errors that a configuration causes: bad
// settings, a missing or unreadable kubeconfig, an API server that cannot
// be reached. The command line exits 2 on them.
var ErrConfig = errors.New("bad configuration")

// configError is an error that a configuration causes (errors.Is
// ErrConfig); its message is the cause's alone.
type configError struct{ error }

func (e configError) Is(target error) bool { return target == ErrConfig }
func (e configError) Unwrap() error        { return e.error }

// configErrorf formats a configuration error, like fmt.Errorf.
func configErrorf(format string, a ...any) error { return configError{fmt.Errorf(format, a...)} }

// Check reports what is wrong with the configuration (an ErrConfig),
// without connecting to anything: the settings, and whether the engine's
// stages can be built from Names and Options.
func (c Config) Check() error {
	c, err := c.withDefaults()
	if err != nil {
		return err
	}
	if _, err := recipe.New(c.Names, *c.Options); err != nil {
		return configErrorf("%w", err)
	}
	return nil
}

// Config configures a Scheduler. The zero value of each field but Names
// and Options means its default (withDefaults).
type Config struct {
	// SchedulerName: gpusched schedules the pods whose spec.schedulerName
	// is this (default "gpusched").
	SchedulerName string
	// Names and Options are the engine's stages, as for `gpusched sim`
	// and `gpusched server`; Options nil means recipe.DefaultOptions().
	Names   recipe.Names
	Options *recipe.Options
	// NodeSelector restricts the nodes gpusched uses (nil: every node).
	NodeSelector labels.Selector
	// LeaderElect runs leader election on the coordination.k8s.io Lease
	// LeaseNamespace/LeaseName; only the leader schedules.
	LeaderElect                  bool
	LeaseNamespace, LeaseName    string
	Identity                     string
	LeaseDuration, RenewDeadline time.Duration
	RetryPeriod                  time.Duration
	// BindWorkers is how many jobs are bound at once (default 64).
	BindWorkers int
	// Tick is the longest time between two rounds (default 1 s): time
	// changes what the policies decide (attained service).
	Tick time.Duration
	// Dynamic is the client of Volcano's Jobs and PodGroups (Dynamic
	// makes it); nil: Volcano Jobs are not scheduled.
	Dynamic dynamic.Interface
	// Logger defaults to slog.Default(); Registerer to a new registry.
	Logger     *slog.Logger
	Registerer prometheus.Registerer
}

// Defaults of Config.
const (
	DefaultSchedulerName = "gpusched"
	DefaultLeaseName     = "gpusched"
	DefaultLeaseDuration = 8 * time.Second
	DefaultRenewDeadline = 6 * time.Second
	DefaultRetryPeriod   = 1500 * time.Millisecond
	DefaultBindWorkers   = 64
)

// withDefaults fills in the defaults and checks the settings.
func (c Config) withDefaults() (Config, error) {
	if c.SchedulerName == "" {
		c.SchedulerName = DefaultSchedulerName
	}
	if c.Options == nil {
		o := recipe.DefaultOptions()
		c.Options = &o
	}
	if c.Names == (recipe.Names{}) {
		c.Names = recipe.Defaults()
	}
	if c.Names.Policy == "srtf" {
		return c, configErrorf("policy srtf needs job lengths, which Kubernetes jobs do not declare")
	}
	if c.LeaseName == "" {
		c.LeaseName = DefaultLeaseName
	}
	if c.LeaseNamespace == "" {
		c.LeaseNamespace = DefaultNamespace()
	}
	if c.Identity == "" {
		c.Identity = defaultIdentity()
	}
	c.LeaseDuration = cmpOr(c.LeaseDuration, DefaultLeaseDuration)
	c.RenewDeadline = cmpOr(c.RenewDeadline, DefaultRenewDeadline)
	c.RetryPeriod = cmpOr(c.RetryPeriod, DefaultRetryPeriod)
	if c.LeaderElect && !(c.LeaseDuration > c.RenewDeadline && c.RenewDeadline > c.RetryPeriod*6/5) {
		return c, configErrorf("leader election wants lease duration > renew deadline > 1.2 × retry period (got %s, %s, %s)", c.LeaseDuration, c.RenewDeadline, c.RetryPeriod)
	}
	if c.BindWorkers <= 0 {
		c.BindWorkers = DefaultBindWorkers
	}
	c.Tick = cmpOr(c.Tick, time.Second)
	if c.Logger == nil {
		c.Logger = slog.Default()
	}
	if c.Registerer == nil {
		c.Registerer = prometheus.NewRegistry()
	}
	return c, nil
}

func cmpOr(d, def time.Duration) time.Duration {
	if d > 0 {
		return d
	}
	return def
}

// serviceAccountNamespace is where a pod finds its namespace.
const serviceAccountNamespace = "/var/run/secrets/kubernetes.io/serviceaccount/namespace"

// DefaultNamespace is the namespace gpusched works in when given none:
// $POD_NAMESPACE, else the namespace of the pod it runs in (its service
// account's), else "default".
func DefaultNamespace() string {
	if ns := os.Getenv("POD_NAMESPACE"); ns != "" {
		return ns
	}
	if b, err := os.ReadFile(serviceAccountNamespace); err == nil && strings.TrimSpace(string(b)) != "" {
		return strings.TrimSpace(string(b))
	}
	return "default"
}

// defaultIdentity names this process in the lease: host name, process ID
// and a random suffix (a restarted pod has the same name and PID 1).
func defaultIdentity() string {
	host, err := os.Hostname()
	if err != nil || host == "" {
		host = "gpusched"
	}
	b := make([]byte, 3)
	_, _ = rand.Read(b)
	return host + "_" + strconv.Itoa(os.Getpid()) + "_" + hex.EncodeToString(b)
}
