#!/usr/bin/env bash
# Megatron-LM launch (pretrain_gpt.py under torchrun), one per node.
# Written by `splitbrain` from plan file gpt2-small-megatron-8.json: megatron on mesh {data: 2, model: 4}.
# Data parallel 2, tensor parallel 4, pipeline 1; 1 micro-batch(es) of 8 per replica.
# Note: the plan keeps the token embedding and the output head whole on each tensor-parallel rank; Megatron-LM always splits the vocabulary of the embedding and the output head over them (less memory, an all-reduce of the embedding output).
# Note: Megatron-LM clips gradients to a global norm of 1 unless told otherwise (--clip-grad); the plan does not clip.
# Run on each of the 1 node(s) with NODE_RANK, MASTER_ADDR and MASTER_PORT set and MEGATRON_LM
# pointing at a Megatron-LM checkout. Megatron-LM pads the vocabulary (--make-vocab-size-divisible-by).
set -euo pipefail
: "${MEGATRON_LM:?set MEGATRON_LM to a Megatron-LM checkout}"
export CUDA_DEVICE_MAX_CONNECTIONS=1  # Megatron-LM asks for it with tensor parallelism

MODEL_ARGS=(
  --num-layers 12
  --hidden-size 768
  --num-attention-heads 12
  --seq-length 1024
  --max-position-embeddings 1024
  --hidden-dropout 0.1 --attention-dropout 0
)
PARALLEL_ARGS=(
  --tensor-model-parallel-size 4
  --use-distributed-optimizer
  --overlap-grad-reduce
)
TRAINING_ARGS=(
  --micro-batch-size 8
  --global-batch-size 16
  --bf16
  --grad-reduce-in-bf16
  --optimizer adam --adam-beta1 0.9 --adam-beta2 0.95 --adam-eps 1e-08
  --lr 0.0006 --lr-decay-style constant --weight-decay 0.1
  --train-iters "${TRAIN_ITERS:-100}"
)
# Synthetic tokens; give your data and tokenizer here instead (--data-path, --tokenizer-type, ...).
DATA_ARGS=(
  --mock-data --tokenizer-type NullTokenizer --vocab-size 50257
)

torchrun --nnodes 1 --nproc_per_node 8 --node_rank "${NODE_RANK:-0}" \
  --master_addr "${MASTER_ADDR:-localhost}" --master_port "${MASTER_PORT:-6000}" \
  "$MEGATRON_LM/pretrain_gpt.py" "${MODEL_ARGS[@]}" "${PARALLEL_ARGS[@]}" "${TRAINING_ARGS[@]}" "${DATA_ARGS[@]}" "$@"
