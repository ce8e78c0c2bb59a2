#!/usr/bin/env bash
# Fault injection across real interfaces: two network namespaces joined by a veth pair,
# one odeon node in each (examples/soak's odeon-soak), and these scenarios, each a
# fresh sender run (numbered tells at 200/s and a ping every 100 ms) against node b:
#
#   baseline     no fault, 10 s
#   delay-200ms  200 ms more on a's side (tc netem delay 200ms), 10 s
#   loss-5pct    5% of packets dropped each way, 15 s
#   pause-2s     everything dropped both ways for 2 s, then restored, 12 s
#   partition    everything dropped for lost_after + 3 s, then healed, 25 s
#
# and reports, per scenario, tells sent, received, lost, duplicated or reordered; the
# asks' outcomes; and their round-trip times. The sender looks its target up again after
# a failed ask, as an application would, and reports when asks failed and recovered.
# A scenario passes when no tell is duplicated, reordered, or delivered although `tell`
# refused it, and none accepted is lost, except in the partition (at most once
# delivery), which passes when the sender saw it (failed asks).
#
#   sudo scripts/netns.sh            environment: LOST_AFTER_MS (default 5000)
#
# Needs root and a kernel that allows network namespaces. Without them it prints
# "netns: SKIPPED: ..." and exits 77 (the usual "skipped" code), so a caller can tell a
# skip from a pass (0) and a failed scenario (1). Faults use tc netem when the kernel
# has it, otherwise nftables for the drop-based scenarios (loss, pause, partition); the
# delay scenario needs netem and is skipped without it. Everything it creates
# (namespaces, veth pair, processes) is removed on exit, however it exits.
set -euo pipefail

LOST_AFTER_MS=${LOST_AFTER_MS:-5000}
ROOT=$(cd "$(dirname "$0")/.." && pwd)
NS_A=odeon-ns-a NS_B=odeon-ns-b
IP_A=10.213.0.1 IP_B=10.213.0.2 PORT=7400

skip() {
  echo "netns: SKIPPED: $*"
  exit 77
}
[ "$(id -u)" = 0 ] || skip "needs root (ip netns, veth, tc/nft)"
command -v ip >/dev/null || skip "iproute2 is not installed (apt-get install -y iproute2)"
ip netns add odeon-ns-probe 2>/dev/null || skip "this kernel or container does not allow 'ip netns add'"
ip netns del odeon-ns-probe

PIDS=()
cleanup() {
  for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null || true; done
  ip netns del "$NS_A" 2>/dev/null || true
  ip netns del "$NS_B" 2>/dev/null || true
}
trap cleanup EXIT
trap 'exit 130' INT TERM

cd "$ROOT"
cargo build --release -p odeon-examples --bin odeon-soak
BIN=${CARGO_TARGET_DIR:-$ROOT/target}/release/odeon-soak
OUT=${OUT:-$ROOT/target/netns}
mkdir -p "$OUT"
export ODEON_SECRET=${ODEON_SECRET:-"netns-$(head -c 16 /dev/urandom | od -An -tx1 | tr -d ' \n')"}

cleanup
ip netns add "$NS_A"
ip netns add "$NS_B"
ip link add odeon-va type veth peer name odeon-vb
ip link set odeon-va netns "$NS_A"
ip link set odeon-vb netns "$NS_B"
ip -n "$NS_A" addr add "$IP_A/24" dev odeon-va
ip -n "$NS_B" addr add "$IP_B/24" dev odeon-vb
for ns in "$NS_A" "$NS_B"; do ip -n "$ns" link set lo up; done
ip -n "$NS_A" link set odeon-va up
ip -n "$NS_B" link set odeon-vb up

NETEM=0
if ip netns exec "$NS_A" tc qdisc add dev odeon-va root netem delay 0ms 2>/dev/null; then
  ip netns exec "$NS_A" tc qdisc del dev odeon-va root
  NETEM=1
elif ! command -v nft >/dev/null; then
  apt-get install -y nftables >/dev/null 2>&1 || skip "neither tc netem nor nftables available"
fi
echo "netns: faults by $([ $NETEM = 1 ] && echo 'tc netem' || echo 'nftables (no netem in this kernel)')"

# drop PCT: drop PCT % of the packets arriving in each namespace from the other (both
# ways). Dropped on arrival, as a lossy network does: a drop on the way out (nftables'
# output hook) would fail the sender's send() with EPERM, which a real network never
# does.
drop() {
  local pct=$1 ns dev peer
  for ns in "$NS_A" "$NS_B"; do
    if [ "$ns" = "$NS_A" ]; then dev=odeon-va peer=$IP_B; else dev=odeon-vb peer=$IP_A; fi
    if [ $NETEM = 1 ]; then
      ip netns exec "$ns" tc qdisc replace dev "$dev" root netem loss "$pct%"
    else
      ip netns exec "$ns" nft add table inet odeon
      ip netns exec "$ns" nft add chain inet odeon in '{ type filter hook input priority 0; }'
      ip netns exec "$ns" nft flush chain inet odeon in
      if [ "$pct" = 100 ]; then
        ip netns exec "$ns" nft add rule inet odeon in ip saddr "$peer" drop
      else
        ip netns exec "$ns" nft add rule inet odeon in ip saddr "$peer" numgen random mod 100 '<' "$pct" drop
      fi
    fi
  done
}
delay() {
  ip netns exec "$NS_A" tc qdisc replace dev odeon-va root netem delay "$1"
}
clear_faults() {
  local ns
  for ns in "$NS_A" "$NS_B"; do
    ip netns exec "$ns" tc qdisc del dev "$([ "$ns" = "$NS_A" ] && echo odeon-va || echo odeon-vb)" root 2>/dev/null || true
    ip netns exec "$ns" nft delete table inet odeon 2>/dev/null || true
  done
}

ip netns exec "$NS_B" "$BIN" node --name b --listen "$IP_B:$PORT" --lost-after-ms "$LOST_AFTER_MS" \
  --report-s 3600 >"$OUT/b.log" 2>"$OUT/b.err" &
PIDS+=($!)
sleep 1

declare -A RESULT VERDICT
# field NAME LINE: the number after " NAME=" in a result line (empty if absent).
field() {
  sed -n "s/.* $1=\([0-9]*\).*/\1/p" <<<"$2"
}
# scenario NAME SECONDS FAULT_AT FAULT_FOR FAULT...: a sender run of SECONDS, with FAULT
# applied FAULT_AT seconds after the sender is ready, for FAULT_FOR seconds (0: until
# the end).
scenario() {
  local name=$1 secs=$2 at=$3 for=$4 fault=("${@:5}") log="$OUT/$1.log"
  echo "== $name"
  ip netns exec "$NS_A" "$BIN" send --name a --listen "$IP_A:$PORT" --seed "$IP_B:$PORT" \
    --target b --seconds "$secs" --lost-after-ms "$LOST_AFTER_MS" >"$log" 2>"$OUT/$name.err" &
  local sender=$!
  PIDS+=("$sender")
  for _ in $(seq 300); do grep -q '^ready' "$log" 2>/dev/null && break; sleep 0.1; done
  if [ ${#fault[@]} -gt 0 ]; then
    sleep "$at"
    "${fault[@]}"
    if [ "$for" != 0 ]; then
      sleep "$for"
      clear_faults
    fi
  fi
  wait "$sender" || true
  clear_faults
  local line
  line=$(grep '^result' "$log" || echo "result missing (see $OUT/$name.err)")
  RESULT[$name]=${line#result }
  echo "   ${RESULT[$name]}"
  grep -E '^(ask failed|recovered|not recovered)' "$log" | head -6 | sed 's/^/   /' || true
  local dup reord lost late unreachable timeouts fails
  dup=$(field duplicated "$line")
  reord=$(field reordered "$line")
  lost=$(field lost "$line")
  late=$(field refused_but_delivered "$line")
  unreachable=$(field unreachable "$line")
  timeouts=$(field timeouts "$line")
  fails=$((${unreachable:-0} + ${timeouts:-0}))
  if [ -z "$dup" ] || [ -z "$lost" ]; then
    VERDICT[$name]="FAIL (no report from the sink)"
  elif [ "$dup" != 0 ] || [ "$reord" != 0 ] || [ "$late" != 0 ]; then
    VERDICT[$name]="FAIL ($dup duplicated, $reord reordered, $late refused but delivered)"
  elif [ "$name" = partition ]; then
    [ "$fails" -gt 0 ] && VERDICT[$name]="ok (lost $lost: at most once; $fails asks failed)" ||
      VERDICT[$name]="FAIL (the partition went unnoticed by asks)"
  elif [ "$lost" != 0 ]; then
    VERDICT[$name]="FAIL (lost $lost)"
  else
    VERDICT[$name]=ok
  fi
  echo "   ${VERDICT[$name]}"
}

scenario baseline 10 0 0
if [ $NETEM = 1 ]; then
  scenario delay-200ms 10 0 0 delay 200ms
else
  RESULT[delay-200ms]="skipped: no tc netem in this kernel" VERDICT[delay-200ms]=skipped
  echo "== delay-200ms: skipped (no tc netem in this kernel)"
fi
scenario loss-5pct 15 0 0 drop 5
scenario pause-2s 12 3 2 drop 100
scenario partition 25 3 $((LOST_AFTER_MS / 1000 + 3)) drop 100

echo
echo "netns summary (lost_after ${LOST_AFTER_MS} ms):"
status=0
for s in baseline delay-200ms loss-5pct pause-2s partition; do
  printf '  %-12s %s\n      %s\n' "$s" "${VERDICT[$s]}" "${RESULT[$s]}"
  [[ ${VERDICT[$s]} == FAIL* ]] && status=1
done
exit $status
