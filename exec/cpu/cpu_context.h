#pragma once
// The oneDNN engine and stream a rank's kernels run on, and the rank's compute thread count.
//
// Threading: Debian's oneDNN 2.6 uses the OpenMP CPU runtime (DNNL_CPU_RUNTIME = OMP; libdnnl
// links libgomp), so a primitive runs on omp_get_max_threads() threads of the calling thread.
// The executor runs one MPI rank per core by default, so CpuContext sets that to 1 (several
// ranks on one node would otherwise each start a thread per core and oversubscribe it). Pass a
// larger count to give a rank several cores. Our own loops (batchnorm, dropout, embedding,
// loss, attention softmax) are single-threaded: they are bandwidth-bound and small beside the
// convolutions and products.

#include <oneapi/dnnl/dnnl.hpp>

namespace splitbrain::exec::cpu {

class CpuContext {
 public:
  explicit CpuContext(int threads = 1);
  CpuContext(const CpuContext&) = delete;
  CpuContext& operator=(const CpuContext&) = delete;

  const dnnl::engine& engine() const { return engine_; }
  dnnl::stream& stream() { return stream_; }
  int threads() const { return threads_; }

 private:
  int threads_;
  dnnl::engine engine_;
  dnnl::stream stream_;
};

}  // namespace splitbrain::exec::cpu
