#include "exec/cpu/staged_memory.h"

#include <type_traits>

#include "exec/cpu/dnnl_check.h"
#include "exec/kernels/kernel_argument_error.h"

namespace splitbrain::exec::cpu {

static_assert(std::is_same_v<Dims, dnnl::memory::dims>, "oneDNN must take the kernels' dims unconverted");

namespace {
dnnl::memory::format_tag plain_tag(std::size_t rank) {
  using tag = dnnl::memory::format_tag;
  switch (rank) {
    case 1:
      return tag::a;
    case 2:
      return tag::ab;
    case 3:
      return tag::abc;
    case 4:
      return tag::abcd;
    case 5:
      return tag::abcde;
    default:
      throw kernels::KernelArgumentError("plain_desc: rank " + std::to_string(rank) + " is not 1 to 5");
  }
}
}  // namespace

dnnl::memory::desc plain_desc(const Dims& dims) {
  dnnl::memory::desc desc;
  SB_DNNL_CHECK(desc = dnnl::memory::desc(dims, dnnl::memory::data_type::f32, plain_tag(dims.size())));
  return desc;
}

dnnl::memory::desc any_desc(const Dims& dims) {
  dnnl::memory::desc desc;
  SB_DNNL_CHECK(desc = dnnl::memory::desc(dims, dnnl::memory::data_type::f32, dnnl::memory::format_tag::any));
  return desc;
}

dnnl::memory wrap(const dnnl::memory::desc& desc, const dnnl::engine& engine, const void* data) {
  dnnl::memory memory;
  SB_DNNL_CHECK(memory = dnnl::memory(desc, engine, const_cast<void*>(data)));
  return memory;
}

StagedMemory::StagedMemory(const dnnl::memory::desc& user, const dnnl::memory::desc& chosen, const dnnl::engine& engine)
    : user_(user), engine_(engine), same_(user == chosen) {
  if (same_) return;
  SB_DNNL_CHECK(staged_ = dnnl::memory(chosen, engine));
  SB_DNNL_CHECK(to_chosen_ = dnnl::reorder(dnnl::reorder::primitive_desc(engine, user, engine, chosen)));
  SB_DNNL_CHECK(to_user_ = dnnl::reorder(dnnl::reorder::primitive_desc(engine, chosen, engine, user)));
}

dnnl::memory StagedMemory::read(dnnl::stream& stream, const float* user) {
  dnnl::memory plain = wrap(user_, engine_, user);
  if (same_) return plain;
  SB_DNNL_CHECK(to_chosen_.execute(stream, plain, staged_));
  return staged_;
}

dnnl::memory StagedMemory::target(float* user) { return same_ ? wrap(user_, engine_, user) : staged_; }

void StagedMemory::copy_back(dnnl::stream& stream, float* user) {
  if (same_) return;
  dnnl::memory plain = wrap(user_, engine_, user);
  SB_DNNL_CHECK(to_user_.execute(stream, staged_, plain));
}

}  // namespace splitbrain::exec::cpu
