package agent

import (
	"context"
	"fmt"
	"net"
	"time"
)

// addrTimeout bounds the look-up of the node's address at start.
const addrTimeout = 3 * time.Second

// lookupFunc resolves a host name, as net.Resolver.LookupHost does.
type lookupFunc func(ctx context.Context, host string) ([]string, error)

// checkAddr reports an error when addr, the address other nodes reach
// this one by, does not resolve here: a multi-node job whose node rank 0
// is this node gets it as MASTER_ADDR (and torchrun's rendezvous
// endpoint), and its processes could not reach one another. An IP address
// always resolves. The usual cause is an agent given a --name that is not
// a host name and no --addr.
func checkAddr(ctx context.Context, lookup lookupFunc, addr string) error {
	if net.ParseIP(addr) != nil {
		return nil
	}
	ctx, cancel := context.WithTimeout(ctx, addrTimeout)
	defer cancel()
	if _, err := lookup(ctx, addr); err != nil {
		return fmt.Errorf("node address %q does not resolve (%w): multi-node jobs get it as MASTER_ADDR "+
			"and cannot reach this node; give the agent --addr HOST_OR_IP", addr, err)
	}
	return nil
}

// warnAddr logs checkAddr's error, if any, as a warning: the node still
// serves single-node jobs.
func (a *Agent) warnAddr(ctx context.Context) {
	if err := checkAddr(ctx, net.DefaultResolver.LookupHost, a.cfg.Addr); err != nil {
		a.log.Warn("unreachable node address", "err", err)
	}
}
