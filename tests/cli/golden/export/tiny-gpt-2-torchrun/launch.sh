#!/usr/bin/env bash
# PyTorch DDP launch of torchrun_train.py (beside this file).
# Written by `splitbrain` from rank 7 of `splitbrain plan --model gpt:layers=2,hidden=64,heads=4,seq=16,vocab=96,positions=16 --cluster local-cpu --devices 2 --batch 16 --dtype fp32 --optimizer sgd`: data-parallel on mesh {data: 2}.
# Data parallel 2, tensor parallel 1, pipeline 1; 1 micro-batch(es) of 8 per replica.
# Run on each of the 1 node(s) with NODE_RANK, MASTER_ADDR and MASTER_PORT set; STEPS steps (default 10).
# --redirects 1 --tee 1 copies rank output to the console; torch 1.13 under Python 3.11 (Debian 12) fails
# without them.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"

"${PYTHON:-python3}" -m torch.distributed.run --nnodes 1 --nproc_per_node 2 --node_rank "${NODE_RANK:-0}" \
  --redirects 1 --tee 1 \
  --master_addr "${MASTER_ADDR:-localhost}" --master_port "${MASTER_PORT:-29500}" \
  "$here/torchrun_train.py" --steps "${STEPS:-10}" \
  --layers 2 --hidden 64 --heads 4 --ffn-hidden 256 --seq 16 --vocab 96 --positions 16 \
  --dropout 0.1 --attention-dropout 0 \
  --batch-per-replica 8 --micro-batches 1 --dtype fp32 \
  --optimizer sgd --lr 0.01 --momentum 0.9 --weight-decay 0 "$@"
