#pragma once
// Memory between the caller's plain row-major buffers and the primitives. Kernels take and give
// plain fp32 buffers (NCHW, [rows, features], ...); convolutions run fastest when oneDNN picks
// its own blocked layout (format_tag::any), so StagedMemory keeps a buffer in the chosen layout
// and the two reorders, built once with the kernel. When the chosen layout is the plain one it
// passes the caller's buffer straight through and copies nothing.

#include <cstdint>
#include <vector>

#include <oneapi/dnnl/dnnl.hpp>

#include "exec/kernels/dims.h"

namespace splitbrain::exec::cpu {

// The kernels' dims, which oneDNN takes as they are (staged_memory.cc checks the types agree).
using Dims = kernels::Dims;

// A plain fp32 descriptor in row-major order (tag a, ab, abc, abcd ... by rank).
dnnl::memory::desc plain_desc(const Dims& dims);
// The same dims with the layout left to the primitive.
dnnl::memory::desc any_desc(const Dims& dims);
// A memory object over a caller's buffer. oneDNN takes `void*` even for inputs it only reads.
dnnl::memory wrap(const dnnl::memory::desc& desc, const dnnl::engine& engine, const void* data);

class StagedMemory {
 public:
  StagedMemory() = default;
  StagedMemory(const dnnl::memory::desc& user, const dnnl::memory::desc& chosen, const dnnl::engine& engine);

  // An argument the primitive reads: the caller's buffer itself, or a copy in the chosen layout.
  dnnl::memory read(dnnl::stream& stream, const float* user);
  // An argument the primitive writes: pass target(user) to it, then call copy_back(user).
  dnnl::memory target(float* user);
  void copy_back(dnnl::stream& stream, float* user);

 private:
  dnnl::memory::desc user_;
  dnnl::engine engine_;
  bool same_ = true;
  dnnl::memory staged_;
  dnnl::reorder to_chosen_;
  dnnl::reorder to_user_;
};

}  // namespace splitbrain::exec::cpu
