#!/usr/bin/env bash
# Runs every cargo-fuzz target of fuzz/ for a fixed time and fails if one crashes.
#
#   scripts/fuzz.sh [seconds-per-target] [target...]     (default: 60 s, every target)
#   FUZZ_ARGS="-max_len=65536 -malloc_limit_mb=64" scripts/fuzz.sh 600 gossip
#
# Installs what it needs: the pinned nightly toolchain (the one .ci/run uses for Miri)
# and cargo-fuzz. Each target starts from its committed seed corpus, fuzz/corpus/<t>/,
# and grows a scratch corpus in fuzz/work/<t>/ (ignored by git), so that repeated runs
# build on each other without touching the committed corpus. A crash leaves its input
# in fuzz/artifacts/<t>/ and makes the script exit 1 after the other targets ran.
# Reproduce one with: cargo +nightly-2026-10-30 fuzz run <t> fuzz/artifacts/<t>/<file>
set -euo pipefail

SECONDS_PER_TARGET=${1:-60}
shift || true
TOOLCHAIN=nightly-2026-10-30
ROOT=$(cd "$(dirname "$0")/.." && pwd)
cd "$ROOT/fuzz"

rustup toolchain list | grep -q "^$TOOLCHAIN" ||
  rustup toolchain install "$TOOLCHAIN" --profile minimal >/dev/null
command -v cargo-fuzz >/dev/null || cargo install cargo-fuzz --locked

targets=("$@")
[ ${#targets[@]} -gt 0 ] || mapfile -t targets < <(cargo "+$TOOLCHAIN" fuzz list)

cargo "+$TOOLCHAIN" fuzz build -O
failed=()
for t in "${targets[@]}"; do
  mkdir -p "work/$t"
  echo "== fuzz $t for ${SECONDS_PER_TARGET}s"
  start=$(date +%s)
  # -rss_limit_mb: a decoder that allocates from a hostile length shows as a crash.
  if cargo "+$TOOLCHAIN" fuzz run -O "$t" "work/$t" "corpus/$t" -- \
      -max_total_time="$SECONDS_PER_TARGET" -rss_limit_mb=1024 -print_final_stats=1 ${FUZZ_ARGS:-} \
      >"work/$t.log" 2>&1; then
    echo "   ok: $(grep -E '^stat::number_of_executed_units' "work/$t.log" | awk '{print $2}') runs" \
      "in $(($(date +%s) - start))s, corpus $(ls "work/$t" | wc -l) inputs"
  else
    echo "   CRASH: see fuzz/work/$t.log and fuzz/artifacts/$t/"
    grep -E 'panicked|ERROR: libFuzzer|SUMMARY' "work/$t.log" | head -5 || true
    failed+=("$t")
  fi
done
if [ ${#failed[@]} -gt 0 ]; then
  echo "fuzz: crashed: ${failed[*]}"
  exit 1
fi
echo "fuzz: ${#targets[@]} targets, ${SECONDS_PER_TARGET}s each, no crash"
