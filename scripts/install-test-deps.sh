#!/usr/bin/env bash
# Installs what the tests and benches need beyond the Rust toolchain: iproute2 (ip netns, veth,
# bridge), ethtool, iputils-ping and iperf3. Idempotent and quiet; needs root (apt-get).
set -euo pipefail

packages=(iproute2 ethtool iputils-ping iperf3)
missing=()
for package in "${packages[@]}"; do
    dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q "install ok installed" || missing+=("$package")
done
if [ ${#missing[@]} -gt 0 ]; then
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq
    apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi
