package kube

import (
	"context"
	"errors"
	"os"
	"time"

	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
)

// ClientOptions say how to reach the API server.
type ClientOptions struct {
	// Kubeconfig is a kubeconfig file; "" means the in-cluster service
	// account when running in a pod, else $KUBECONFIG or ~/.kube/config.
	Kubeconfig string
	// QPS and Burst are the client's rate limit (client-go's defaults, 5
	// and 10, would throttle a scheduler).
	QPS   float32
	Burst int
	// UserAgent names the client in the API server's logs.
	UserAgent string
}

// RESTConfig loads the client configuration and says where it came from.
// A missing or unreadable file, or no configuration at all, wraps
// ErrConfig.
func RESTConfig(o ClientOptions) (*rest.Config, string, error) {
	var cfg *rest.Config
	var from string
	var err error
	switch {
	case o.Kubeconfig != "":
		if _, serr := os.Stat(o.Kubeconfig); serr != nil {
			return nil, "", configErrorf("kubeconfig %s: %w", o.Kubeconfig, serr)
		}
		from = "kubeconfig " + o.Kubeconfig
		cfg, err = clientcmd.BuildConfigFromFlags("", o.Kubeconfig)
	case os.Getenv("KUBERNETES_SERVICE_HOST") != "":
		from = "the in-cluster service account"
		cfg, err = rest.InClusterConfig()
	default:
		rules := clientcmd.NewDefaultClientConfigLoadingRules()
		from = "the default kubeconfig ($KUBECONFIG or ~/.kube/config)"
		cfg, err = clientcmd.NewNonInteractiveDeferredLoadingClientConfig(rules, &clientcmd.ConfigOverrides{}).ClientConfig()
		if clientcmd.IsEmptyConfig(err) {
			return nil, "", configErrorf("no Kubernetes configuration: not in a pod, no --kubeconfig, and neither $KUBECONFIG nor ~/.kube/config holds one")
		}
	}
	if err != nil {
		return nil, "", configErrorf("%s: %w", from, err)
	}
	cfg.QPS, cfg.Burst = o.QPS, o.Burst
	cfg.UserAgent = o.UserAgent
	cfg.ContentType = "application/vnd.kubernetes.protobuf"
	cfg.AcceptContentTypes = "application/vnd.kubernetes.protobuf,application/json"
	return cfg, from, nil
}

// Connect makes a client and checks that the API server answers within
// timeout; a server that does not wraps ErrConfig, naming it and where its
// address came from.
func Connect(ctx context.Context, cfg *rest.Config, from string, timeout time.Duration) (kubernetes.Interface, error) {
	client, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return nil, configErrorf("%s: %w", from, err)
	}
	probe := rest.CopyConfig(cfg)
	probe.Timeout = timeout
	pc, err := kubernetes.NewForConfig(probe)
	if err != nil {
		return nil, configErrorf("%s: %w", from, err)
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	done := make(chan error, 1)
	go func() {
		_, err := pc.Discovery().ServerVersion()
		done <- err
	}()
	select {
	case err = <-done:
	case <-ctx.Done():
		err = ctx.Err()
	}
	if err != nil {
		if errors.Is(err, context.Canceled) {
			return nil, err
		}
		return nil, configErrorf("cannot reach the API server %s (from %s): %w", cfg.Host, from, err)
	}
	return client, nil
}
