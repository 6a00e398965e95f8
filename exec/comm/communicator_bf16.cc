// Communicator::run on a bf16 plan's collectives: the fp32 storage the CPU backend computes in
// (holding values already rounded to bf16) travels as 16-bit words, so the bytes MPI moves are
// the 2 per element the plan counts; reductions add in bf16 (bf16_reductions.h).

#include <fmt/format.h>

#include <cstring>
#include <stdexcept>

#include "exec/comm/bf16.h"
#include "exec/comm/communicator.h"

namespace splitbrain::exec::comm {
namespace {

using plans::CollectiveKind;

LocalBytes packed_bf16(const LocalArray& input) {
  std::vector<uint16_t> words(input.values.size());
  pack_bf16(input.values, words);
  LocalBytes out{input.shape, 2, std::vector<std::byte>(words.size() * sizeof(uint16_t))};
  std::memcpy(out.bytes.data(), words.data(), out.bytes.size());
  return out;
}

LocalArray unpacked_bf16(const LocalBytes& input) {
  if (input.element_bytes != 2) throw std::logic_error("unpacked_bf16: not 2-byte elements");
  std::vector<uint16_t> words(input.bytes.size() / sizeof(uint16_t));
  std::memcpy(words.data(), input.bytes.data(), input.bytes.size());
  LocalArray out{input.shape, std::vector<float>(words.size())};
  unpack_bf16(words, out.values);
  return out;
}

}  // namespace

LocalArray Communicator::run_bf16(const plans::Collective& c, const LocalArray& input, std::string_view label) {
  check(c, input.shape, 2);
  const LocalBytes words = packed_bf16(input);
  switch (c.kind) {
    case CollectiveKind::all_reduce: {
      LocalArray out = unpacked_bf16(engine_.all_reduce_bf16(c.axes, words));
      count(label, c);
      return out;
    }
    case CollectiveKind::reduce_scatter: {
      LocalArray out = unpacked_bf16(engine_.reduce_scatter_bf16(c.axes, words, c.dim));
      count(label, c);
      return out;
    }
    case CollectiveKind::all_gather:
    case CollectiveKind::all_to_all:
    case CollectiveKind::halo_exchange:
    case CollectiveKind::send_recv:
      return unpacked_bf16(run(c, words, label));  // checked again and counted there
  }
  throw std::logic_error(fmt::format("{}: unknown collective kind", plans::to_string(c, mesh())));
}

}  // namespace splitbrain::exec::comm
