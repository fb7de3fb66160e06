#!/bin/sh
# Writes the help of every test subcommand, under sweep and launch too, into DIR (default: this
# directory), from the fathom binary $1; `git diff` then shows any change to the command line.
set -eu
bin=$1
dir=${2:-$(dirname "$0")}
for args in "" stream rr crr udp file sweep "sweep stream" "sweep rr" "sweep crr" "sweep udp" \
    launch "launch stream" "launch rr" "launch crr" "launch udp"; do
    name=$(echo "fathom $args" | tr ' ' '-' | sed 's/-$//')
    # shellcheck disable=SC2086
    timeout 10 "$bin" $args --help >"$dir/$name.txt" 2>&1
done
for args in "sweep file" "launch file" "sweep" "launch"; do
    name=$(echo "error $args" | tr ' ' '-')
    # shellcheck disable=SC2086
    timeout 10 "$bin" $args >"$dir/$name.txt" 2>&1 || echo "exit $?" >>"$dir/$name.txt"
done
timeout 10 "$bin" completions bash >"$dir/completions.bash.txt"
