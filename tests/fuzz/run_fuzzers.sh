#!/usr/bin/env bash
# Runs each libFuzzer target of a MABD_FUZZ build for a bounded time on a copy of its seed
# corpus (tests/fuzz/corpus/TARGET), then prints the executions and the corpus size per target
# and one closing line "N passed, N failed". A target fails on any crash, sanitizer report,
# timeout, out-of-memory or leak; libFuzzer then writes the input that caused it to
# BUILD/fuzz/TARGET/artifacts/ (replay: BUILD/TARGET_fuzz FILE).
#
#   tests/fuzz/run_fuzzers.sh BUILD_DIR [SECONDS_PER_TARGET]
set -uo pipefail
build=${1:?usage: run_fuzzers.sh BUILD_DIR [SECONDS_PER_TARGET]}
seconds=${2:-30}
here=$(cd "$(dirname "$0")" && pwd)
passed=0
failed=0
for target in scene model obj; do
  binary=$build/${target}_fuzz
  work=$build/fuzz/$target
  rm -rf "$work"
  mkdir -p "$work/corpus" "$work/artifacts"
  log=$work/fuzz.log
  # The seed corpus is read only; new inputs go to the work corpus (listed first).
  "$binary" "$work/corpus" "$here/corpus/$target" -dict="$here/$target.dict" \
      -max_total_time="$seconds" -timeout=20 \
      -rss_limit_mb=2048 -max_len=65536 -print_final_stats=1 \
      -artifact_prefix="$work/artifacts/" > "$log" 2>&1
  status=$?
  runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -n 1)
  files=$(find "$work/corpus" "$here/corpus/$target" -type f | wc -l)
  if [ "$status" -eq 0 ]; then
    passed=$((passed + 1))
    echo "fuzz ${target}_fuzz: passed, ${runs:-?} executions in ${seconds} s, corpus ${files} files"
  else
    failed=$((failed + 1))
    echo "fuzz ${target}_fuzz: FAILED (exit $status) after ${runs:-?} executions; log $log"
    grep -E -m 20 "ERROR|SUMMARY|runtime error|terminate|what\(\)|Test unit written" "$log"
  fi
done
echo "fuzz: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
