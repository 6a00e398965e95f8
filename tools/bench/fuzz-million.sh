#!/usr/bin/env bash
# Each reader fuzz target of tools/sanitize.sh run for 1,000,000 inputs (ASan + UBSan, from the
# seed corpus of the repository's examples). Writes results/fuzz/ (README.md and each target's
# libFuzzer log; made in a temporary folder and renamed). About 10 minutes on 2 cores, plus the
# sanitizer build the first time.
set -euo pipefail
cd "$(dirname "$0")/../.."
out=results/fuzz
runs=${RUNS:-1000000}
tmp=$(mktemp -d "${TMPDIR:-/tmp}/fuzz-million.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
bash tools/sanitize.sh --fuzz-runs "$runs" --fuzz-logs "$tmp/fuzz"
{
  echo "# Fuzzing the readers of user input"
  echo
  echo "Command: \`bash tools/bench/fuzz-million.sh\` (\`tools/sanitize.sh --fuzz-runs $runs\`: clang 14, libFuzzer,"
  echo "AddressSanitizer + UndefinedBehaviorSanitizer; seeds: the repository's model, plan and cluster files, a prediction,"
  echo "a checkpoint manifest). Machine: $(nproc) CPUs, $(lscpu | sed -n 's/^Model name: *//p' | head -n 1); run $(date -u +%Y-%m-%dT%H:%M:%SZ)."
  echo "A finding is a crash, a sanitizer report, a hang or any exception but a clear refusal (InputError, exit code 2)."
  echo
  echo "| target | inputs run | seconds | findings |"
  echo "|---|---:|---:|---:|"
  for log in "$tmp"/fuzz/*.log; do
    target=$(basename "$log" .log)
    done_line=$(grep -E "^Done [0-9]+ runs in [0-9]+ second" "$log" | tail -n 1)
    inputs=$(echo "$done_line" | awk '{print $2}')
    seconds=$(echo "$done_line" | awk '{print $5}')
    findings=$(grep -cE "ERROR: (AddressSanitizer|libFuzzer|UndefinedBehaviorSanitizer)|runtime error:" "$log" || true)
    echo "| $target | $inputs | $seconds | $findings |"
  done
  echo
  echo "Each target's full libFuzzer output is \`<target>.log\` here."
} > "$tmp/fuzz/README.md"
rm -rf "$out.new" && mkdir -p "$(dirname "$out")" && cp -r "$tmp/fuzz" "$out.new"
rm -rf "$out" && mv "$out.new" "$out"
cat "$out/README.md"
