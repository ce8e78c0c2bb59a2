#!/bin/bash
# Interleaved A/B runs of `remote-odeon rtt|throughput` (issue 19).
# usage: scripts/rtt-counts.sh ROUNDS rtt|throughput VARIANT...
#   VARIANT = name:binary[:VAR=VAL,VAR=VAL]   e.g. a30:target/release/remote-odeon:REMOTE_ODEON_SPIN_US=30
# For rtt, prints p50/p99 and, from `perf stat` over both processes (the server is the
# client's child), events per round trip (25,000 asks incl. warm-up; setup included):
# context switches, futex calls, sched_wakeup, epoll_wait, read, recvfrom, migrations.
# Summarise with: python3 scripts/rtt-counts-summary.py OUTPUT
rounds=$1; mode=$2; shift 2
RT=25000
for r in $(seq 1 $rounds); do
  for v in "$@"; do
    name=${v%%:*}; rest=${v#*:}; bin=${rest%%:*}; envs=""
    [[ "$rest" == *:* ]] && envs=${rest#*:}
    envargs=$(echo "$envs" | tr ',' ' ')
    sleep 0.3
    if [ "$mode" = rtt ]; then
      out=$(env $envargs perf stat -x, -e context-switches,cpu-migrations,syscalls:sys_enter_futex,sched:sched_wakeup,syscalls:sys_enter_epoll_wait,syscalls:sys_enter_read,syscalls:sys_enter_recvfrom -o ${TMPDIR:-/tmp}/rtt-counts.perf.$$ nice -n 0 "$bin" rtt 2>/dev/null | grep REMOTE-RESULT)
      g() { grep "$1" ${TMPDIR:-/tmp}/rtt-counts.perf.$$ | cut -d, -f1; }
      p50=$(echo "$out" | sed 's/.*"p50_us":\([0-9.]*\).*/\1/')
      p99=$(echo "$out" | sed 's/.*"p99_us":\([0-9.]*\).*/\1/')
      per() { awk -v a="$1" -v n=$RT 'BEGIN{printf "%.2f", a/n}'; }
      echo "$r $name p50=$p50 p99=$p99 cs=$(per $(g context-switches)) futex=$(per $(g sys_enter_futex)) wakeup=$(per $(g sched_wakeup)) epoll=$(per $(g sys_enter_epoll_wait)) read=$(per $(g sys_enter_read)) recvfrom=$(per $(g sys_enter_recvfrom)) mig=$(per $(g cpu-migrations)) load=$(cut -d' ' -f1 /proc/loadavg)"
    else
      env $envargs "$bin" throughput 2>/dev/null | grep REMOTE-RESULT | sed 's/.*"msgs_per_s":\([0-9.]*\).*/\1/' | while read x; do echo "$r $name msgs_per_s=$x"; done
    fi
  done
done
