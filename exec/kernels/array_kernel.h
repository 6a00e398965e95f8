#pragma once
// Copies and fills of whole arrays in a backend's memory, for the ops whose pass is a copy
// (flatten, the gradient of a sum, dropout during evaluation) or a constant (the zero gradient
// of token ids, the loss value the loss layer outputs): the ops never touch elements themselves.
// And the host copies of the two ops whose work still partly goes through the host: the halo
// rows of a height-split convolution (comm::Communicator on host arrays; the block itself stays
// in the backend's memory, copied by rows) and batchnorm's
// per-channel sums where the plan all-reduces them over ranks (the engine's fp64 all-reduce on
// host arrays); and the batch's labels, which come from the data source with the images.
// The labels' upload and the loss's download are queued: the host goes on queuing the step's work
// while they wait their turn behind it, so a step's one read of a value (its loss) comes at its end.

#include <cstdint>
#include <memory>
#include <span>

#include "exec/kernels/row_copy.h"

namespace splitbrain::exec::kernels {

// A double on its way from the backend's memory to the host, queued behind the work before it.
class QueuedDownload {
 public:
  virtual ~QueuedDownload() = default;
  // The value, once the copy is done: waits for it (for nothing once the backend's queued work is).
  virtual double wait() = 0;
};

class ArrayKernel {
 public:
  virtual ~ArrayKernel() = default;
  // into[i] = from[i] for i < elements (the arrays may be the same; never partly overlapping).
  virtual void copy(const float* from, float* into, int64_t elements) = 0;
  // into[i] = value for i < elements.
  virtual void fill(float* into, int64_t elements, float value) = 0;
  // The rows `copy` names, between arrays that do not overlap (a height split's block into its
  // halo-extended array, its boundary rows out of it).
  virtual void copy_rows(const float* from, float* into, const RowCopy& copy) = 0;

  // host[i] = from[i], into[i] = host[i] for i < host.size(); complete when they return.
  virtual void download(const float* from, std::span<float> host) = 0;
  virtual void upload(std::span<const float> host, float* into) = 0;
  virtual void download(const double* from, std::span<double> host) = 0;
  virtual void upload(std::span<const double> host, double* into) = 0;
  // Class labels into the backend's memory, where the loss kernel reads them: queued behind the
  // work before it, without waiting; `host` may go as soon as this returns.
  virtual void upload_queued(std::span<const int32_t> host, int32_t* into) = 0;
  // Queues a copy of `*from` to the host; the returned download gives the value. This kernel must
  // outlive it.
  virtual std::unique_ptr<QueuedDownload> download_queued(const double* from) = 0;
};

// Over host memory: the CPU backend's.
std::unique_ptr<ArrayKernel> make_host_array_kernel();

}  // namespace splitbrain::exec::kernels
