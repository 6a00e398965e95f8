#pragma once
// A backend of the executor: what differs between hardware, and nothing else. Its device holds
// the arrays and is the only code that touches their values (device.h), its ops compute each
// layer (layer_op.h) and its collectives move data between ranks (comm/collective_engine.h); the
// runtime (Trainer) is the same for every backend. "cpu" is oneDNN with the MPI engine;
// "cuda" is the CUDA kernels with the NCCL engine (exec/cuda/cuda_backend.h).

#include <memory>
#include <string>

#include "exec/comm/collective_engine.h"
#include "exec/runtime/device.h"
#include "exec/runtime/layer_op.h"

namespace splitbrain::exec {

struct Backend {
  std::string name;  // "cpu", "cuda": for messages and the measured report
  // fp32 products on TF32 tensor cores (cuda with --tf32): 10 mantissa bits in, fp32 out. The
  // report records it, since it changes both speed and results.
  bool tf32 = false;
  OpFactory ops;
  std::unique_ptr<comm::CollectiveEngine> collectives;
  std::unique_ptr<Device> device;
};

}  // namespace splitbrain::exec
