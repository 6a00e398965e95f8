#!/usr/bin/env bash
# Rewrites the golden files of the export tests (tests/cli/golden/export/) from the current build:
# re-plans GPT-3 175B on 1,024 A100s (128 DGX nodes, batch 1536, bf16, Adam; about 15 s) for the
# committed plan file of its best plan, then reruns the CliExport, CliLlamaExport, CliMoeExport and
# CliTorchtitanExport tests (CliLlamaExport plans Llama 3 8B on 64 A100s itself; CliMoeExport
# exports Mixtral 8x7B from the committed plan file mixtral-8x7b-64.plan.json, CliTorchtitanExport
# Llama 3 8B from llama3-8b-fsdp-64.plan.json) with SPLITBRAIN_UPDATE_GOLDEN=1 so they write what
# they produce. Review the diff before committing.
# Usage: bash tools/regenerate-export-goldens.sh [BUILD_DIR]   (default: build)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-$root/build}
golden=$root/tests/cli/golden/export
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

"$build/tools/splitbrain" plan --model gpt3-175b --cluster dgx-a100-80g:nodes=128 --devices 1024 --batch 1536 \
  --dtype bf16 --optimizer adam --top 3 --emit-plans "$work"
mkdir -p "$golden"
cp "$(ls "$work"/01-*.json)" "$golden/gpt3-175b-1024-top.plan.json"
SPLITBRAIN_UPDATE_GOLDEN=1 ctest --test-dir "$build" -R '^Cli(Llama|Moe|Torchtitan)?Export\.' --output-on-failure
echo "[goldens] rewritten under $golden; review with: git diff --stat -- $golden"
