#pragma once
// How many tensors one launch of the GPU's many-tensor optimizer kernels takes, and so how many
// launches the host queues to update or to clear a step's tensors: the CUDA backend hands their
// arrays over in the kernel's 4 KB of parameters (exec/cuda/tensor_batches.h); calibrate hands the
// count to the cost model (exec::Device::arrays_per_update_pass -> sim::Device::
// optimizer_tensors_per_kernel), which prices each launch. C++17, for the backend's .cu files.

namespace splitbrain::plans {

constexpr int kTensorsPerOptimizerLaunch = 64;

constexpr int optimizer_launches(int tensors) {
  return (tensors + kTensorsPerOptimizerLaunch - 1) / kTensorsPerOptimizerLaunch;
}

}  // namespace splitbrain::plans
