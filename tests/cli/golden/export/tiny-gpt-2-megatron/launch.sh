#!/usr/bin/env bash
# Megatron-LM launch (pretrain_gpt.py under torchrun), one per node.
# Written by `splitbrain` from rank 7 of `splitbrain plan --model gpt:layers=2,hidden=64,heads=4,seq=16,vocab=96,positions=16 --cluster local-cpu --devices 2 --batch 16 --dtype fp32 --optimizer sgd`: data-parallel on mesh {data: 2}.
# Data parallel 2, tensor parallel 1, pipeline 1; 1 micro-batch(es) of 8 per replica.
# Note: Megatron-LM clips gradients to a global norm of 1 unless told otherwise (--clip-grad); the plan does not clip.
# Run on each of the 1 node(s) with NODE_RANK, MASTER_ADDR and MASTER_PORT set and MEGATRON_LM
# pointing at a Megatron-LM checkout. Megatron-LM pads the vocabulary (--make-vocab-size-divisible-by).
set -euo pipefail
: "${MEGATRON_LM:?set MEGATRON_LM to a Megatron-LM checkout}"

MODEL_ARGS=(
  --num-layers 2
  --hidden-size 64
  --num-attention-heads 4
  --seq-length 16
  --max-position-embeddings 16
  --hidden-dropout 0.1 --attention-dropout 0
)
PARALLEL_ARGS=(
  --tensor-model-parallel-size 1
  --overlap-grad-reduce
)
TRAINING_ARGS=(
  --micro-batch-size 8
  --global-batch-size 16
  --optimizer sgd --sgd-momentum 0.9
  --lr 0.01 --lr-decay-style constant --weight-decay 0
  --train-iters "${TRAIN_ITERS:-100}"
)
# Synthetic tokens; give your data and tokenizer here instead (--data-path, --tokenizer-type, ...).
DATA_ARGS=(
  --mock-data --tokenizer-type NullTokenizer --vocab-size 96
)

torchrun --nnodes 1 --nproc_per_node 2 --node_rank "${NODE_RANK:-0}" \
  --master_addr "${MASTER_ADDR:-localhost}" --master_port "${MASTER_PORT:-6000}" \
  "$MEGATRON_LM/pretrain_gpt.py" "${MODEL_ARGS[@]}" "${PARALLEL_ARGS[@]}" "${TRAINING_ARGS[@]}" "${DATA_ARGS[@]}" "$@"
