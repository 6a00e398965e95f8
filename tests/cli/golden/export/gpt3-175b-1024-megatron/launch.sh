#!/usr/bin/env bash
# Megatron-LM launch (pretrain_gpt.py under torchrun), one per node.
# Written by `splitbrain` from plan file gpt3-175b-1024-top.plan.json: best +zero1 +recompute +sp on mesh {pipe: 4, data: 32, model: 8}.
# Data parallel 32, tensor parallel 8 with sequence parallelism, pipeline 4; 16 micro-batch(es) of 3 per replica.
# Note: nearest Megatron-LM form (96 layers like this one): layer 'h0.attn.c_proj': splits out over 'model'; Megatron-LM's tensor parallelism over 'model' splits its input features (row-parallel).
# Note: nearest Megatron-LM form: layer 'wpe': splits out over 'model'; Megatron-LM's tensor parallelism over 'model' splits the sequence of a per-token layer (sequence parallelism) or nothing.
# Note: nearest Megatron-LM form: layer 'wte': splits out over 'model'; Megatron-LM's tensor parallelism over 'model' splits the embedding's vocabulary rows or nothing.
# Note: nearest Megatron-LM form: layer 'lm_head': splits in over 'model'; Megatron-LM's tensor parallelism over 'model' splits the output head's vocabulary outputs or nothing.
# Note: nearest Megatron-LM form: pipeline.stage_starts: chunk 1 starts at layer 'h24.ln_2', inside a transformer layer; Megatron-LM cuts pipelines between whole transformer layers.
# Note: nearest Megatron-LM form: pipeline.stage_starts: chunk 2 starts at layer 'h48.ln_2', inside a transformer layer; Megatron-LM cuts pipelines between whole transformer layers.
# Note: nearest Megatron-LM form: pipeline.stage_starts: chunk 3 starts at layer 'h72.ln_2', inside a transformer layer; Megatron-LM cuts pipelines between whole transformer layers.
# Note: Megatron-LM clips gradients to a global norm of 1 unless told otherwise (--clip-grad); the plan does not clip.
# Note: uneven stages: Megatron-LM recomputes layer by layer, keeping each layer's input.
# Run on each of the 128 node(s) with NODE_RANK, MASTER_ADDR and MASTER_PORT set and MEGATRON_LM
# pointing at a Megatron-LM checkout. Megatron-LM pads the vocabulary (--make-vocab-size-divisible-by).
set -euo pipefail
: "${MEGATRON_LM:?set MEGATRON_LM to a Megatron-LM checkout}"
export CUDA_DEVICE_MAX_CONNECTIONS=1  # Megatron-LM asks for it with tensor parallelism

MODEL_ARGS=(
  --num-layers 96
  --hidden-size 12288
  --num-attention-heads 96
  --seq-length 2048
  --max-position-embeddings 2048
  --hidden-dropout 0.1 --attention-dropout 0
)
PARALLEL_ARGS=(
  --tensor-model-parallel-size 8
  --sequence-parallel
  --pipeline-model-parallel-size 4
  --decoder-first-pipeline-num-layers 25
  --decoder-last-pipeline-num-layers 23
  --use-distributed-optimizer
  --overlap-grad-reduce
)
TRAINING_ARGS=(
  --micro-batch-size 3
  --global-batch-size 1536
  --recompute-granularity full
  --recompute-method uniform --recompute-num-layers 1
  --bf16
  --grad-reduce-in-bf16
  --optimizer adam --adam-beta1 0.9 --adam-beta2 0.999 --adam-eps 1e-08
  --lr 0.01 --lr-decay-style constant --weight-decay 0
  --train-iters "${TRAIN_ITERS:-100}"
)
# Synthetic tokens; give your data and tokenizer here instead (--data-path, --tokenizer-type, ...).
DATA_ARGS=(
  --mock-data --tokenizer-type NullTokenizer --vocab-size 50257
)

torchrun --nnodes 128 --nproc_per_node 8 --node_rank "${NODE_RANK:-0}" \
  --master_addr "${MASTER_ADDR:-localhost}" --master_port "${MASTER_PORT:-6000}" \
  "$MEGATRON_LM/pretrain_gpt.py" "${MODEL_ARGS[@]}" "${PARALLEL_ARGS[@]}" "${TRAINING_ARGS[@]}" "${DATA_ARGS[@]}" "$@"
