package kube

import (
	"context"
	"io"
	"log/slog"

	resourceapi "k8s.io/api/resource/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
)

// WriteClaimForTest writes a claim as a bind worker does before pod's
// Binding (the claim as a round saw it, the allocation gpusched chose)
// and returns the outcome gpusched_bindings_total would count ("" when
// it succeeded).
func WriteClaimForTest(ctx context.Context, client kubernetes.Interface, claim *resourceapi.ResourceClaim,
	alloc *resourceapi.AllocationResult, pod string, uid types.UID) (string, error) {
	s := &Scheduler{client: client, log: slog.New(slog.NewTextHandler(io.Discard, nil))}
	err := s.writeClaims(ctx, podBind{uid: uid, ns: claim.Namespace, name: pod, claims: []claimWrite{{obj: claim, alloc: alloc}}})
	return claimResult(err), err
}
