#pragma once
// What a rank's CUDA kernels run on: its GPU, one compute stream, a cuDNN and a cuBLAS handle
// bound to that stream, a growable cuDNN workspace, growable staging buffers shared by the
// kernels whose device buffers depend on the call (the others own buffers sized once), and the
// caching allocator of the rank's arrays and kept state (device_memory_pool.h).
//
// The twin of cpu::CpuContext. Kernels compute on the caller's pointers, which are device memory
// (the CudaArrayDevice's arrays and kept buffers; the tests' OnDevice copies): a kernel queues its
// work on stream() and returns without waiting, so nothing it writes may be read on the host
// before synchronize() (CudaArrayDevice waits where a value must reach the host). A kernel's own
// device buffers hold only what its arguments cannot (explicit padding, a packed layout). Where a
// kernel interface passes host memory (a few per-channel values), its header says so.
//
// Math: by default cuDNN convolutions use CUDNN_FMA_MATH and cuBLAS CUBLAS_PEDANTIC_MATH, i.e.
// plain fp32 (no TF32 tensor cores), so results match the CPU backend to fp32 rounding;
// Fp32Math::tf32 lets both use TF32 tensor cores (PyTorch's allow_tf32).
//
// Kernel graphs: the kernels whose library calls cost the host most to queue (cuDNN's
// convolutions, cuBLAS's products) queue them through CUDA graphs recorded once per argument set
// (call_graphs.h); KernelGraphs::off queues every call directly. The counts say what happened.

#include <cublas_v2.h>
#include <cuda_runtime_api.h>
#include <cudnn.h>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include "exec/cuda/device_buffer.h"
#include "exec/cuda/device_memory_pool.h"
#include "exec/runtime/host_transfers.h"

namespace splitbrain::exec::cuda {

enum class Fp32Math { exact, tf32 };
enum class KernelGraphs { replay, off };

// Kernel calls queued through CUDA graphs so far (CallGraphs): first calls (queued directly, the
// first with their arguments), recorded (a graph made and launched: the second), replayed (a graph
// launched again), and unrecordable: queued directly by a kernel whose recording failed (it
// queues directly from then on).
struct KernelGraphCounts {
  int64_t first_calls = 0;
  int64_t recorded = 0;
  int64_t replayed = 0;
  int64_t unrecordable = 0;
};

class CudaContext {
 public:
  // Makes `device` current and creates the stream and handles on it.
  explicit CudaContext(int device, Fp32Math math = Fp32Math::exact, KernelGraphs graphs = KernelGraphs::replay);
  ~CudaContext();
  CudaContext(const CudaContext&) = delete;
  CudaContext& operator=(const CudaContext&) = delete;

  int device() const { return device_; }
  Fp32Math fp32_math() const { return math_; }
  KernelGraphs kernel_graphs() const { return graphs_; }
  const KernelGraphCounts& kernel_graph_counts() const { return graph_counts_; }
  KernelGraphCounts& kernel_graph_counts() { return graph_counts_; }
  cudaStream_t stream() const { return stream_; }
  cudnnHandle_t cudnn() const { return cudnn_; }
  cublasHandle_t cublas() const { return cublas_; }
  // Where the arrays and the ops' kept state live (shared: they may outlive the context).
  const std::shared_ptr<DeviceMemoryPool>& memory() const { return memory_; }

  // At least `bytes` of scratch for one library call at a time (cuDNN algorithms). Growing it
  // synchronises first: work queued earlier may still use the old block.
  void* workspace(std::size_t bytes);
  // Staging buffer `slot` with at least `bytes`; same growth rule. A kernel staging through the
  // context uses slots 0, 1, 2, ... for its arguments; the next call (of any kernel) may reuse them.
  void* staging(std::size_t slot, std::size_t bytes);

  // Waits for everything queued on stream(); counted.
  void synchronize() const;
  // The calls to synchronize() so far: the host's waits for the device (DeviceClock::host_waits).
  int64_t host_waits() const { return host_waits_; }

  // Copies between host and device made by kernels rather than the CudaArrayDevice (a batch's
  // labels, the loss, batchnorm's per-channel sums, halo rows): counted, so the run report's
  // host transfers are all of them.
  void count_host_transfer(HostTransferPurpose purpose, std::size_t bytes) {
    host_transfers_.add(purpose, static_cast<int64_t>(bytes));
  }
  const HostTransfers& host_transfers() const { return host_transfers_; }

 private:
  void* grown(DeviceBuffer& buffer, std::size_t bytes);

  int device_;
  Fp32Math math_;
  KernelGraphs graphs_;
  KernelGraphCounts graph_counts_;
  cudaStream_t stream_ = nullptr;
  cudnnHandle_t cudnn_ = nullptr;
  cublasHandle_t cublas_ = nullptr;
  DeviceBuffer workspace_;
  std::vector<DeviceBuffer> staging_;
  std::shared_ptr<DeviceMemoryPool> memory_ = std::make_shared<DeviceMemoryPool>();
  HostTransfers host_transfers_;
  mutable int64_t host_waits_ = 0;  // counts, not state: synchronize() stays const
};

}  // namespace splitbrain::exec::cuda
