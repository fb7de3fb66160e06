#!/usr/bin/env bash
# Installs the peer tools that bench/*.py compare fathom against, from Debian's packages:
# iperf3, iperf (iperf2), nuttcp and sockperf, plus what the paths need: iproute2 (ip netns,
# veth), ethtool, util-linux (taskset) and linux-perf (profiles of both tools in a missed
# target's note). openssl and socat are the TLS and file benches' peers.
# Not in Debian 12's main archive, so not installed: netperf (non-free) and neper (not packaged);
# the benches skip a peer whose binary is missing and say so.
# Idempotent and quiet; needs root (apt-get).
set -euo pipefail

packages=(iperf3 iperf nuttcp sockperf iproute2 ethtool util-linux linux-perf openssl socat)
missing=()
for package in "${packages[@]}"; do
    dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q "install ok installed" || missing+=("$package")
done
if [ ${#missing[@]} -gt 0 ]; then
    export DEBIAN_FRONTEND=noninteractive
    # Packages must not start services (iperf3 ships a unit): keep any policy in place, else
    # refuse service starts for the duration of the install.
    policy=/usr/sbin/policy-rc.d
    if [ ! -e "$policy" ]; then
        printf '#!/bin/sh\nexit 101\n' >"$policy"
        chmod 755 "$policy"
        trap 'rm -f "$policy"' EXIT
    fi
    apt-get update -qq
    apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi
