#!/usr/bin/env bash
# Checks that every C++ and CUDA source in the repository follows .clang-format (clang-format 14,
# as Debian 12 ships it; another version formats a few constructs differently). Lists the files
# that drift and exits 1; `--fix` rewrites them in place instead. CI runs the check.
# Usage: bash tools/check-format.sh [--fix]
set -euo pipefail
cd "$(dirname "$0")/.."
mode=(--dry-run --Werror)
case "${1:-}" in
  "") ;;
  --fix) mode=(-i) ;;
  *) echo "check-format.sh: unknown argument '$1' (usage: bash tools/check-format.sh [--fix])" >&2; exit 2 ;;
esac
formatter=clang-format-14
command -v "$formatter" > /dev/null || {
  echo "check-format.sh: $formatter not found: run bash tools/install-dependencies.sh" >&2
  exit 2
}
if git rev-parse --is-inside-work-tree > /dev/null 2>&1; then
  mapfile -t files < <(git ls-files '*.h' '*.cc' '*.cu' '*.cuh')
else
  mapfile -t files < <(find model plans sim exec tools tests -name '*.h' -o -name '*.cc' -o -name '*.cu' -o -name '*.cuh' | sort)
fi
if [ "${mode[0]}" = -i ]; then
  "$formatter" -i "${files[@]}"
  echo "[format] formatted ${#files[@]} files"
  exit 0
fi
if ! drift=$("$formatter" "${mode[@]}" "${files[@]}" 2>&1); then
  # clang-format reports "FILE:LINE:COLUMN: error: code should be clang-formatted" per place.
  places=$(echo "$drift" | grep -E '^[^ ]+:[0-9]+:[0-9]+: (error|warning):' | cut -d: -f1,2 || true)
  echo "$places" | sort -u -t: -k1,1 | sed 's/^/  drifts from .clang-format: /' >&2
  echo "[format] $(echo "$places" | cut -d: -f1 | sort -u | wc -l) file(s) drift; fix with: bash tools/check-format.sh --fix" >&2
  exit 1
fi
echo "[format] ${#files[@]} files follow .clang-format"
