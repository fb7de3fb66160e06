#!/usr/bin/env bash
# The WAN emulator against the kernel's own bridge on the same path, in one run:
#   host A ──veth── router R ──veth── host B   (three network namespaces, offloads off on all ends)
# 1. TCP throughput (iperf3) through a bridge in R, then through the emulator at zero delay, as it
#    runs (real-time threads) and without real-time priority (CAP_SYS_NICE dropped);
# 2. 64-byte UDP packet rate (iperf3 -u -l 64 -b 0), counted on R's egress interface, the same three;
# 3. ping round trips through the emulator at 5, 25 and 100 ms one way (10, 50, 200 ms RTT).
# Each measurement lasts $SECS seconds (default 5); bridge and emulator alternate $ROUNDS times.
# Results go to stdout and bench/RESULTS-wan.md. Needs root, iproute2, ethtool, iputils-ping, iperf3.
# Traffic stays inside the namespaces made here; they are deleted on exit, whatever happens.
set -euo pipefail

SECS=${SECS:-5}
ROUNDS=${ROUNDS:-2}
ROOT=$(cd "$(dirname "$0")/.." && pwd)
OUT=${OUT:-$ROOT/bench/RESULTS-wan.md}
P=fwb-$$
A=$P-a R=$P-r B=$P-b
FWD_PID=

cleanup() {
    [ -n "$FWD_PID" ] && kill -TERM "$FWD_PID" 2>/dev/null && wait "$FWD_PID" 2>/dev/null
    for ns in $A $R $B; do ip netns del "$ns" 2>/dev/null || true; done
}
trap cleanup EXIT INT TERM

[ "$(id -u)" = 0 ] || { echo "wan.sh: needs root (network namespaces)" >&2; exit 2; }
cargo build -q -p fathom-wan --release --example forward --manifest-path "$ROOT/Cargo.toml"
FORWARD=$(cargo metadata -q --format-version 1 --manifest-path "$ROOT/Cargo.toml" \
    | sed -n 's/.*"target_directory":"\([^"]*\)".*/\1/p')/release/examples/forward

topology() {
    for ns in $A $R $B; do ip netns add "$ns"; ip -n "$ns" link set lo up; done
    ip link add "$P-a" netns "$A" type veth peer name ra netns "$R"
    ip link add "$P-b" netns "$B" type veth peer name rb netns "$R"
    ip -n "$A" link set "$P-a" name eth0
    ip -n "$B" link set "$P-b" name eth0
    ip -n "$A" addr add 10.201.0.1/24 dev eth0
    ip -n "$B" addr add 10.201.0.2/24 dev eth0
    for end in "$A eth0" "$B eth0" "$R ra" "$R rb"; do
        set -- $end
        ip netns exec "$1" ethtool -K "$2" tso off gso off gro off tx off >/dev/null 2>&1
        ip -n "$1" link set "$2" up
    done
}

bridge_on()  { ip -n "$R" link add br0 type bridge; ip -n "$R" link set ra master br0
               ip -n "$R" link set rb master br0; ip -n "$R" link set br0 up; }
bridge_off() { ip -n "$R" link del br0; }

emulator_on() {  # $1 = parameters for both directions; $2 = "nort" to run without real-time priority
    local prefix=()
    [ "${2:-}" = nort ] && prefix=(setpriv --inh-caps=-sys_nice --bounding-set=-sys_nice)
    "${prefix[@]}" "$FORWARD" "$R" ra rb "$1" 120 >"$TMP/counters.json" 2>"$TMP/forward.err" &
    FWD_PID=$!
    sleep 0.3
}
emulator_off() { kill -TERM "$FWD_PID"; wait "$FWD_PID"; FWD_PID=; }

wait_for_path() {
    for _ in $(seq 50); do ip netns exec "$A" ping -c1 -W1 -q 10.201.0.2 >/dev/null 2>&1 && return; sleep 0.1; done
    echo "wan.sh: no path from A to B" >&2; exit 1
}

tx_packets() { ip netns exec "$R" cat /sys/class/net/rb/statistics/tx_packets; }

# iperf3 through the current path; prints "Gbit/s" (TCP) or "kpps forwarded" (UDP 64 B).
iperf() {  # $1 = tcp|udp
    ip netns exec "$B" timeout $((SECS + 10)) iperf3 -s -1 -p 5201 >/dev/null 2>&1 &
    local server=$!
    sleep 0.3
    local before; before=$(tx_packets)
    local args=(-c 10.201.0.2 -p 5201 -t "$SECS" -J)
    [ "$1" = udp ] && args+=(-u -l 64 -b 0)
    ip netns exec "$A" timeout $((SECS + 10)) iperf3 "${args[@]}" >"$TMP/iperf.json" || true
    local after; after=$(tx_packets)
    wait "$server" 2>/dev/null || true
    if [ "$1" = tcp ]; then
        sed -n '/"sum_received"/,/}/s/.*"bits_per_second":[[:space:]]*\([0-9.e+]*\).*/\1/p' "$TMP/iperf.json" \
            | head -1 | awk '{printf "%.3f", $1 / 1e9}'
    else
        awk -v n=$((after - before)) -v s="$SECS" 'BEGIN {printf "%.1f", n / s / 1000}'
    fi
}

ratio() { awk -v a="$1" -v b="$2" 'BEGIN {printf "%.2f", (b > 0) ? a / b : 0}'; }

TMP=$(mktemp -d)
topology
{
    echo "## Latest run"
    echo "$(date -u '+%Y-%m-%d %H:%M UTC'), kernel $(uname -r), $(nproc) CPUs, load $(cut -d' ' -f1-3 /proc/loadavg)."
    echo "Same veth path A–R–B, offloads off on all four ends; ${SECS}s per measurement; numbers are"
    echo "noisy on a shared 2-CPU machine, so compare the ratios of one row, not rows across runs."
    echo
    echo "TCP in Gbit/s (receiver), UDP-64 in thousands of frames/s leaving R; ratio = emulator / bridge."
    echo
    echo "| round | TCP bridge | TCP emulator | ratio | TCP no-RT | ratio | UDP-64 bridge | UDP-64 emulator | ratio | UDP-64 no-RT | ratio |"
    echo "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |"
} >"$TMP/results.md"

for round in $(seq "$ROUNDS"); do
    bridge_on; wait_for_path
    tcp_br=$(iperf tcp); udp_br=$(iperf udp)
    bridge_off
    emulator_on "" nort; wait_for_path
    tcp_nr=$(iperf tcp); udp_nr=$(iperf udp)
    emulator_off
    emulator_on ""; wait_for_path
    tcp_em=$(iperf tcp); udp_em=$(iperf udp)
    emulator_off
    echo "| $round | $tcp_br | $tcp_em | $(ratio "$tcp_em" "$tcp_br") | $tcp_nr | $(ratio "$tcp_nr" "$tcp_br")" \
         "| $udp_br | $udp_em | $(ratio "$udp_em" "$udp_br") | $udp_nr | $(ratio "$udp_nr" "$udp_br") |" >>"$TMP/results.md"
    echo "round $round: TCP bridge $tcp_br emulator $tcp_em no-RT $tcp_nr Gbit/s;" \
         "UDP-64 bridge $udp_br emulator $udp_em no-RT $udp_nr kpps"
    echo "emulator counters: $(cat "$TMP/counters.json")"
done

{
    echo
    echo "Emulator counters of the last round (drops other than loss/queue would be the emulator's own):"
    echo
    echo '```json'
    cat "$TMP/counters.json"
    echo '```'
    echo
    echo "| one-way delay | expected RTT | ping min ms | ping avg ms | min error ms |"
    echo "| --- | --- | --- | --- | --- |"
} >>"$TMP/results.md"

for one_way in 5 25 100; do
    emulator_on "delay=${one_way}ms"
    wait_for_path
    stats=$(ip netns exec "$A" timeout 20 ping -q -c 20 -i 0.01 10.201.0.2 | sed -n 's/.*= \([0-9.]*\)\/\([0-9.]*\)\/.*/\1 \2/p')
    emulator_off
    set -- $stats
    expected=$((2 * one_way))
    error=$(awk -v m="$1" -v e="$expected" 'BEGIN {printf "%+.3f", m - e}')
    echo "| ${one_way} ms | ${expected} ms | $1 | $2 | $error |" >>"$TMP/results.md"
    echo "delay ${one_way} ms one way: ping min $1 avg $2 ms (expected $expected, error $error)"
done

# Keep the hand-written part of $OUT (everything up to the marker) and replace the measurements.
MARK='<!-- everything below is written by bench/wan.sh -->'
if [ -f "$OUT" ] && grep -qF "$MARK" "$OUT"; then
    awk -v mark="$MARK" '{ print } $0 == mark { exit }' "$OUT" >"$TMP/final.md"
else
    echo "$MARK" >"$TMP/final.md"
fi
cat "$TMP/results.md" >>"$TMP/final.md"
cp "$TMP/final.md" "$OUT"
rm -rf "$TMP"
echo "wrote $OUT"
