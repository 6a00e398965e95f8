#include "exec/comm/bf16_reductions.h"

#include <fmt/format.h>

#include <climits>
#include <cstdint>
#include <cstring>
#include <stdexcept>
#include <vector>

#include "exec/comm/bf16.h"
#include "exec/comm/mpi_check.h"

namespace splitbrain::exec::comm::ops {
namespace {

// MPI_User_function: inout[i] = bf16(in[i] + inout[i]), the words read as bf16 values.
void bf16_sum(void* in, void* inout, int* length, MPI_Datatype* /*type*/) {
  const auto* a = static_cast<const uint16_t*>(in);
  auto* b = static_cast<uint16_t*>(inout);
  for (int i = 0; i < *length; ++i) b[i] = bf16_bits(bf16_value(a[i]) + bf16_value(b[i]));
}

// Made once, after MPI_Init (the first reduction's call), kept until MPI_Finalize frees it.
MPI_Op bf16_sum_op() {
  static const MPI_Op op = [] {
    MPI_Op made = MPI_OP_NULL;
    SB_MPI_CHECK(MPI_Op_create(&bf16_sum, /*commute=*/1, &made));
    return made;
  }();
  return op;
}

void check_bf16(const LocalBytes& input, const char* what) {
  check_size(input, what);
  if (input.element_bytes != 2) {
    throw std::invalid_argument(fmt::format("{}: bf16 elements are 2 bytes, not {}", what, input.element_bytes));
  }
}

int word_count(size_t bytes, const char* what) {
  const size_t words = bytes / 2;
  if (words > static_cast<size_t>(INT_MAX)) throw std::invalid_argument(fmt::format("{}: too many elements", what));
  return static_cast<int>(words);
}

}  // namespace

LocalBytes all_reduce_bf16(MPI_Comm comm, int n, const LocalBytes& input) {
  check_bf16(input, "all_reduce_bf16");
  if (n == 1) return input;
  LocalBytes out{input.shape, 2, std::vector<std::byte>(input.bytes.size())};
  SB_MPI_CHECK(MPI_Allreduce(input.bytes.data(), out.bytes.data(), word_count(input.bytes.size(), "all_reduce_bf16"),
                             MPI_UINT16_T, bf16_sum_op(), comm));
  return out;
}

LocalBytes reduce_scatter_bf16(MPI_Comm comm, int n, const LocalBytes& input, int dim) {
  check_bf16(input, "reduce_scatter_bf16");
  row_view(input.shape, 2, dim);  // validates dim
  const auto d = static_cast<size_t>(dim);
  if (input.shape[d] % n != 0) {
    throw std::invalid_argument(
        fmt::format("reduce_scatter_bf16: dim {} of extent {} is not {} blocks", dim, input.shape[d], n));
  }
  if (n == 1) return input;
  LocalBytes out{input.shape, 2, std::vector<std::byte>(input.bytes.size() / static_cast<size_t>(n))};
  out.shape[d] /= n;
  // Member i receives the i-th contiguous piece: the blocks along dim laid out one after another.
  const std::vector<std::byte> packed = pack_blocks(input, dim, n);
  SB_MPI_CHECK(MPI_Reduce_scatter_block(packed.data(), out.bytes.data(),
                                        word_count(out.bytes.size(), "reduce_scatter_bf16"), MPI_UINT16_T,
                                        bf16_sum_op(), comm));
  return out;
}

}  // namespace splitbrain::exec::comm::ops
