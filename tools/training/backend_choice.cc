#include "tools/training/backend_choice.h"

#include <fmt/format.h>

#include <memory>

#include "exec/cpu/cpu_backend.h"
#include "exec/cpu/cpu_kernel_factory.h"
#include "exec/runtime/host_device.h"
#include "model/errors.h"
#include "tools/training/cpu_cache_size.h"
#if SPLITBRAIN_HAS_CUDA_BACKEND
#include "exec/cuda/conv_algorithm_file.h"
#include "exec/cuda/cuda_array_device.h"
#include "exec/cuda/cuda_backend.h"
#include "exec/cuda/cuda_device.h"
#include "exec/cuda/cuda_event_clock.h"
#include "exec/cuda/cuda_kernel_factory.h"
#include "tools/training/nccl_collective_transport.h"
#endif

namespace splitbrain::tools {
namespace {

// How long the GPU's stream is held before a timed kernel run (exec/cuda/cuda_event_clock.h): more
// than the host needs to queue one run (a few library calls: a convolution's backward took an
// H200's host 150-250 us), so the GPU's time holds none of the host's.
[[maybe_unused]] constexpr double kKernelLeadSeconds = 1e-3;

void refuse_tf32_on_cpu(const BackendSettings& settings) {
  if (settings.tf32) {
    throw InputError(
        "--tf32: TF32 is a tensor-core mode of NVIDIA GPUs (--backend cuda); the cpu backend computes "
        "in plain fp32");
  }
}

#if !SPLITBRAIN_HAS_CUDA_BACKEND
[[noreturn]] void refuse_cuda_in_this_build() {
  throw InputError("--backend cuda: this splitbrain was built without the CUDA backend (SPLITBRAIN_CUDA=OFF)");
}

[[noreturn]] void refuse_conv_algorithms_in_this_build(const std::string& flag) {
  throw InputError(fmt::format(
      "{}: cuDNN algorithms belong to the CUDA backend, and this splitbrain was built without it (SPLITBRAIN_CUDA=OFF)",
      flag));
}
#endif

}  // namespace

std::string default_backend() {
#if SPLITBRAIN_HAS_CUDA_BACKEND
  if (exec::cuda::visible_device_count() > 0) return "cuda";
#endif
  return "cpu";
}

exec::Backend make_backend(const std::string& name, exec::comm::MeshCommunicators& communicators,
                           const BackendSettings& settings) {
  if (name == "cpu") {
    refuse_tf32_on_cpu(settings);
    return exec::cpu::make_cpu_backend(communicators, settings.threads);
  }
  if (name == "cuda") {
#if SPLITBRAIN_HAS_CUDA_BACKEND
    return exec::cuda::make_cuda_backend(communicators, settings.tf32, settings.kernel_graphs);
#else
    refuse_cuda_in_this_build();
#endif
  }
  throw InputError(fmt::format("--backend {}: no such backend (cpu, cuda)", name));
}

BackendKernels make_backend_kernels(const std::string& name, const BackendSettings& settings) {
  if (name == "cpu") {
    refuse_tf32_on_cpu(settings);
    return {std::make_unique<exec::cpu::CpuKernelFactory>(settings.threads),
            cpu_last_level_cache_bytes(),
            [] { evict_caches(); },
            std::make_unique<exec::HostStepClock>(),
            0.0,
            std::make_unique<exec::HostDevice>(),
            true};
  }
  if (name == "cuda") {
#if SPLITBRAIN_HAS_CUDA_BACKEND
    const int device = exec::cuda::select_device_for_this_rank();
    auto context = std::make_shared<exec::cuda::CudaContext>(
        device, settings.tf32 ? exec::cuda::Fp32Math::tf32 : exec::cuda::Fp32Math::exact,
        settings.kernel_graphs ? exec::cuda::KernelGraphs::replay : exec::cuda::KernelGraphs::off);
    auto factory = std::make_unique<exec::cuda::CudaKernelFactory>(context);
    const double l2_bytes = exec::cuda::l2_cache_bytes(device);
    // Writing twice the L2's bytes leaves none of a kernel's data in it.
    const auto sweep_elements = static_cast<int64_t>(2.0 * l2_bytes / sizeof(float));
    std::shared_ptr<exec::kernels::KeptBuffer> sweep =
        factory->make_kept_buffer(sweep_elements * static_cast<int64_t>(sizeof(float)));
    std::shared_ptr<exec::kernels::ArrayKernel> writer = factory->make_array_kernel();
    return {std::move(factory),
            l2_bytes,
            [sweep, writer, sweep_elements] { writer->fill(sweep->as<float>(), sweep_elements, 1.0f); },
            std::make_unique<exec::cuda::CudaEventClock>(context, kKernelLeadSeconds),
            kKernelLeadSeconds,
            std::make_unique<exec::cuda::CudaArrayDevice>(context)};
#else
    refuse_cuda_in_this_build();
#endif
  }
  throw InputError(fmt::format("--backend {}: no such backend (cpu, cuda)", name));
}

std::unique_ptr<CollectiveTransport> make_collective_transport(const std::string& name) {
  if (name == "cpu") return nullptr;
  if (name == "cuda") {
#if SPLITBRAIN_HAS_CUDA_BACKEND
    return make_nccl_collective_transport();
#else
    refuse_cuda_in_this_build();
#endif
  }
  throw InputError(fmt::format("--backend {}: no such backend (cpu, cuda)", name));
}

void save_conv_algorithms(const std::string& path, const std::string& flag) {
#if SPLITBRAIN_HAS_CUDA_BACKEND
  (void)flag;
  exec::cuda::write_conv_algorithm_file(path,
                                        {exec::cuda::current_device_name(), exec::cuda::conv_algorithm_choices()});
#else
  (void)path;
  refuse_conv_algorithms_in_this_build(flag);
#endif
}

void adopt_conv_algorithms(const std::string& path, const std::string& flag) {
#if SPLITBRAIN_HAS_CUDA_BACKEND
  const exec::cuda::ConvAlgorithmFile file = exec::cuda::read_conv_algorithm_file(path);
  const std::string here = exec::cuda::current_device_name();
  if (file.gpu != here) {
    throw InputError(
        fmt::format("{} {}: gpu: the choices were timed on a {}, this rank runs on a {}", flag, path, file.gpu, here));
  }
  exec::cuda::adopt_conv_algorithm_choices(file.choices);
#else
  (void)path;
  refuse_conv_algorithms_in_this_build(flag);
#endif
}

}  // namespace splitbrain::tools
