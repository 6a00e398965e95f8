#!/usr/bin/env bash
# DeepSpeed launch with ds_config.json, for your DeepSpeed training script.
# Written by `splitbrain` from rank 1 of `splitbrain plan --model gpt:layers=2,hidden=64,heads=4,seq=16,vocab=96,positions=16 --cluster local-cpu --devices 2 --batch 16 --dtype fp32 --optimizer sgd`: data-parallel +zero3 = best +zero3 on mesh {data: 2}.
# Data parallel 2, tensor parallel 1, pipeline 1; 1 micro-batch(es) of 8 per replica.
# Note: the training script builds its optimizer: SGD, lr 0.01, momentum 0.9, weight decay 0.
# Set TRAIN_SCRIPT to a script that takes deepspeed.add_config_arguments' flags and calls
# deepspeed.initialize on the model.
set -euo pipefail
: "${TRAIN_SCRIPT:?set TRAIN_SCRIPT to your DeepSpeed training script}"
here="$(cd "$(dirname "$0")" && pwd)"

deepspeed --num_nodes 1 --num_gpus 2 "$TRAIN_SCRIPT" --deepspeed --deepspeed_config "$here/ds_config.json" "$@"
