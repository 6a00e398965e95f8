#!/usr/bin/env bash
# The test command: installs what is missing, builds, runs every test through ctest.
set -euo pipefail
cd "$(dirname "$0")/.."

bash tools/install-dependencies.sh
bash tools/build.sh "$@"
if ! ctest --test-dir build --output-on-failure -j "$(nproc)"; then
  # --output-on-failure prints a failed test's output where it ends, hundreds of lines above the
  # summary; a log cut to its last lines shows only the names. Repeat the end of each one's output.
  log=build/Testing/Temporary/LastTest.log
  while IFS= read -r failed; do
    name="${failed#*:}"
    printed=$(awk -v name="$name" '
      /^[0-9]+\/[0-9]+ Test: / && substr($0, index($0, "Test: ") + 6) == name { inside = 1; next }
      inside && /^<end of output>/ { exit }
      inside && printing { print }
      inside && /^Output:/ { getline; printing = 1 }' "$log" | tail -n 25)
    # A test not run (its fixture failed) printed nothing.
    if [[ -n "$printed" ]]; then printf '== the end of what %s printed (%s)\n%s\n' "$name" "$log" "$printed"; fi
  done < build/Testing/Temporary/LastTestsFailed.log
  exit 1
fi
