#!/bin/sh
# horovodrun --host-discovery-script for gpusched's elastic jobs: prints the
# job's current workers, one host:slots line each, from the ConfigMap
# <job>-hosts that gpusched keeps (mounted at $GPUSCHED_HOSTS, default
# /etc/gpusched/hosts). gpusched rewrites it after every bind, shrink or
# failure with a higher generation (/etc/gpusched/generation); the kubelet
# refreshes the mounted copy within its sync period (about a minute).
# Usage: horovodrun -np 2 --min-np 2 --max-np 6 \
#          --host-discovery-script /etc/gpusched/discover-hosts.sh python train.py
set -eu
HOSTS=${GPUSCHED_HOSTS:-/etc/gpusched/hosts}
[ -r "$HOSTS" ] || exit 0 # no list yet: no hosts
grep -E '^[^#[:space:]]+:[0-9]+$' "$HOSTS" || true
