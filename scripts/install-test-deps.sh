#!/usr/bin/env bash
# Installs what the tests and benches need beyond the Rust toolchain: iproute2 (ip netns, veth,
# bridge), ethtool, iputils-ping, iperf3, perl-base (the lab tests' stand-in agent) and OpenSSH
# (the WAN test copies a file with scp between two lab hosts, running its own sshd inside one),
# tcpdump (tests/rr_wire.rs checks rr's latency against a capture on the loopback),
# openssl and socat (bench/tls.py: the single-core AES-GCM limit, and socat OPENSSL as a peer)
# and chromium (crates/report's HTML test loads the report headless, checks the console is clean
# and screenshots it to see the plots are drawn)
# and dnsmasq-base (tests/discover_dns.rs: 200 A records and SRV records on a loopback port)
# and strongSwan (tests/lab_ipsec.rs: `lab up --ipsec` runs charon in every lab host, ESP in
# user space through kernel-libipsec where the kernel has no ESP)
# and prometheus, with promtool (tests/metrics*.rs: promtool checks a scrape, the alert rules
# and their unit tests; a real Prometheus, started by the test, scrapes agents and answers
# PromQL). Its postinst would start a daemon on :9090; install_missing's policy-rc.d refuses it.
# Idempotent and quiet; needs root (apt-get).
set -euo pipefail
. "$(dirname "${BASH_SOURCE[0]}")/apt-install.sh"

packages=(iproute2 ethtool iputils-ping iperf3 perl-base openssh-server openssh-client chromium tcpdump openssl socat dnsmasq-base)
# `fathom launch` under real launchers (tests/launch_slurm.rs, tests/launch_mpi.rs).
packages+=(slurm-wlm munge openmpi-bin)
# The advisor's slow-disk scenario (tests/advisor_disk.rs): an ext4 loop device (losetup, mkfs.ext4).
packages+=(mount e2fsprogs)
packages+=(prometheus)
packages+=(strongswan-charon strongswan-swanctl libcharon-extra-plugins libstrongswan-extra-plugins libstrongswan-standard-plugins)
install_missing "${packages[@]}"
# From PyPI: kubernetes-validate, the Kubernetes API schemas (tests/deploy.rs checks deploy/kubernetes).
python3 -c 'import kubernetes_validate' 2>/dev/null || PIP_BREAK_SYSTEM_PACKAGES=1 python3 -m pip install -q --disable-pip-version-check --root-user-action=ignore kubernetes-validate
# From PyPI: cloudcoil-models-prometheus-operator, models generated from the Prometheus Operator's
# CRD schemas (validate.py checks the PodMonitor in deploy/kubernetes/overlays/prometheus-operator).
python3 -c 'import cloudcoil.models.prometheus_operator' 2>/dev/null || PIP_BREAK_SYSTEM_PACKAGES=1 python3 -m pip install -q --disable-pip-version-check --root-user-action=ignore cloudcoil-models-prometheus-operator
# From PyPI: iperf3, whose TestResult is a real consumer of iperf3's -J (tests/iperf3_cli.rs
# feeds it `fathom iperf3 -J`).
python3 -c 'import iperf3' 2>/dev/null || PIP_BREAK_SYSTEM_PACKAGES=1 python3 -m pip install -q --disable-pip-version-check --root-user-action=ignore iperf3
