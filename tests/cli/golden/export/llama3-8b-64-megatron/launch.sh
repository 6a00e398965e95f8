#!/usr/bin/env bash
# Megatron-LM launch (pretrain_gpt.py under torchrun), one per node.
# Written by `splitbrain` from rank 26 of `splitbrain plan --model llama3-8b --cluster dgx-a100-80g:nodes=8 --devices 64 --batch 64 --dtype bf16 --optimizer adam`: pipeline 4 stages on mesh {pipe: 4, data: 16}.
# Data parallel 16, tensor parallel 1, pipeline 4; 4 micro-batch(es) of 1 per replica.
# Note: nearest Megatron-LM form: pipeline.stage_starts: chunk 1 starts at layer 'h8.ffn_norm', inside a transformer layer; Megatron-LM cuts pipelines between whole transformer layers.
# Note: nearest Megatron-LM form: pipeline.stage_starts: chunk 2 starts at layer 'h16.ffn_norm', inside a transformer layer; Megatron-LM cuts pipelines between whole transformer layers.
# Note: Megatron-LM clips gradients to a global norm of 1 unless told otherwise (--clip-grad); the plan does not clip.
# Run on each of the 8 node(s) with NODE_RANK, MASTER_ADDR and MASTER_PORT set and MEGATRON_LM
# pointing at a Megatron-LM checkout. Megatron-LM pads the vocabulary (--make-vocab-size-divisible-by).
set -euo pipefail
: "${MEGATRON_LM:?set MEGATRON_LM to a Megatron-LM checkout}"

MODEL_ARGS=(
  --num-layers 32
  --hidden-size 4096
  --num-attention-heads 32
  --seq-length 8192
  --max-position-embeddings 8192
  --ffn-hidden-size 14336
  --group-query-attention --num-query-groups 8
  --normalization RMSNorm --norm-epsilon 1e-05
  --swiglu
  --position-embedding-type rope --rotary-base 500000
  --untie-embeddings-and-output-weights
  --disable-bias-linear
  --hidden-dropout 0 --attention-dropout 0
)
PARALLEL_ARGS=(
  --tensor-model-parallel-size 1
  --pipeline-model-parallel-size 4
  --decoder-first-pipeline-num-layers 9
  --decoder-last-pipeline-num-layers 7
  --overlap-grad-reduce
)
TRAINING_ARGS=(
  --micro-batch-size 1
  --global-batch-size 64
  --bf16
  --grad-reduce-in-bf16
  --optimizer adam --adam-beta1 0.9 --adam-beta2 0.999 --adam-eps 1e-08
  --lr 0.01 --lr-decay-style constant --weight-decay 0
  --train-iters "${TRAIN_ITERS:-100}"
)
# Synthetic tokens; give your data and tokenizer here instead (--data-path, --tokenizer-type, ...).
DATA_ARGS=(
  --mock-data --tokenizer-type NullTokenizer --vocab-size 128256
)

torchrun --nnodes 8 --nproc_per_node 8 --node_rank "${NODE_RANK:-0}" \
  --master_addr "${MASTER_ADDR:-localhost}" --master_port "${MASTER_PORT:-6000}" \
  "$MEGATRON_LM/pretrain_gpt.py" "${MODEL_ARGS[@]}" "${PARALLEL_ARGS[@]}" "${TRAINING_ARGS[@]}" "${DATA_ARGS[@]}" "$@"
