#!/usr/bin/env bash
# `run --data synthetic` needs no shape or class count: for every zoo model it feeds the model's
# own input shape and classes (token models: token sequences). One data-parallel step on one rank
# at batch 1 per model. Left out: gpt2-small (a step of 1,024 tokens is ~0.9 TFLOP, half a
# minute here) and gpt3-175b (its 175 B parameters do not fit this machine); `gpt` runs with
# small options instead, the same code at another size. So do the Llama 3 shapes (8 to 405 B
# parameters): `llama` runs at a small size, and so does `moe` (4 experts, top 2) for Mixtral 8x7B.
# Usage: synthetic_zoo.sh SPLITBRAIN_BINARY MPIEXEC
set -uo pipefail
binary=$1 mpiexec=$2
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
failures=0
models=(vgg11 vgg13 vgg16 vgg19 vgg11-cifar10 vgg16-cifar10 alexnet resnet18 resnet50 mlp fashion-vgg
        "gpt:layers=2,hidden=64,heads=4,seq=16,vocab=96,positions=16"
        "llama:layers=2,hidden=64,heads=4,kv_heads=2,ffn=96,seq=16,vocab=96,rope_theta=10000"
        "moe:layers=2,hidden=64,heads=4,kv_heads=2,ffn=32,seq=16,vocab=96,rope_theta=10000,experts=4,top_k=2")
listed=$("$binary" models --json - | python3 -c 'import json,sys; print(" ".join(m["name"] for m in json.load(sys.stdin)["models"]))')
for name in $listed; do
  case " ${models[*]} gpt2-small gpt3-175b llama3-8b llama3-70b llama3-405b mixtral-8x7b " in
    *" $name "* | *" $name:"*) ;;
    *) echo "FAIL: zoo model '$name' is not covered by this test"; failures=$((failures + 1)) ;;
  esac
done
for model in "${models[@]}"; do
  plan="$work/plan.json"
  printf '{"format": "splitbrain-plan", "version": 1, "family": "data-parallel", "model": "%s", "batch": 1,
  "dtype": "fp32", "mesh": {"data": 1}, "default": {"batch": ["data"]},
  "optimizer": {"kind": "sgd_momentum", "learning_rate": 0.01, "momentum": 0.9}}\n' "$model" > "$plan"
  if output=$("$mpiexec" -np 1 "$binary" run --backend cpu --plan "$plan" --data synthetic --warmup 0 --iters 1 2>&1) &&
     grep -q "step 1/1  loss" <<< "$output"; then
    echo "ok   $model: $(grep -o 'data .*' <<< "$output" | head -1)"
  else
    echo "FAIL $model:"; echo "$output" | tail -5; failures=$((failures + 1))
  fi
done
[ "$failures" -eq 0 ] || exit 1
echo "synthetic data fits every zoo model"
