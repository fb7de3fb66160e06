#!/usr/bin/env bash
# Installs the peer tools that bench/*.py compare fathom against, from Debian's packages:
# iperf3, iperf (iperf2), nuttcp and sockperf, plus what the paths need: iproute2 (ip netns,
# veth), ethtool, util-linux (taskset) and linux-perf (profiles of both tools in a missed
# target's note). openssl and socat are the TLS and file benches' peers.
# Not in Debian 12's main archive, so not installed: netperf (non-free) and neper (not packaged);
# the benches skip a peer whose binary is missing and say so.
# Idempotent and quiet; needs root (apt-get).
set -euo pipefail
. "$(dirname "${BASH_SOURCE[0]}")/apt-install.sh"

packages=(iperf3 iperf nuttcp sockperf iproute2 ethtool util-linux linux-perf openssl socat)
install_missing "${packages[@]}"
