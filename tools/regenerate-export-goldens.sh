#!/usr/bin/env bash
# Rewrites the golden files of the export tests (tests/cli/golden/export/) from the current build:
# reruns the CliExport, CliLlamaExport, CliMoeExport and CliTorchtitanExport tests with
# SPLITBRAIN_UPDATE_GOLDEN=1, so that they write what they produce. Their inputs stay as committed:
# the plan files gpt3-175b-1024-top.plan.json (a GPT-3 175B plan on 1,024 A100s whose pipeline
# stages hold whole transformer layers, which Megatron-LM can express), mixtral-8x7b-64.plan.json
# and llama3-8b-fsdp-64.plan.json; CliLlamaExport plans Llama 3 8B on 64 A100s itself, so its
# golden follows the planner's ranking. Review the diff before committing.
# Usage: bash tools/regenerate-export-goldens.sh [BUILD_DIR]   (default: build)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-$root/build}
golden=$root/tests/cli/golden/export
SPLITBRAIN_UPDATE_GOLDEN=1 ctest --test-dir "$build" -R '^Cli(Llama|Moe|Torchtitan)?Export\.' --output-on-failure
echo "[goldens] rewritten under $golden; review with: git diff --stat -- $golden"
