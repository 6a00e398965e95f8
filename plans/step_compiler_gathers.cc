// ZeRO 3's parameter gathers in the step program: posted a block ahead so that the next block's
// all-gathers run on the communication stream while this block computes (FSDP2's prefetch;
// DeepSpeed's ZeRO 3 prefetches alike), each waited for right before its pass uses it
// (step_compiler_internal.h holds the compiler's state).

#include <fmt/format.h>

#include <stdexcept>
#include <utility>

#include "model/statistics.h"
#include "plans/step_compiler_internal.h"
#include "plans/tied_weights.h"

namespace splitbrain::plans::detail {

void StepCompiler::plan_gathers(const std::vector<PipelinePass>& passes,
                                const std::vector<std::vector<Segment>>& segments) {
  gather_order_.clear();
  gathers_taken_ = 0;
  // Groups are numbered densely (a group's gathers go out when the one numbered before it
  // begins): a new one at each segment, block or micro-batch that gathers.
  int segment = 0;
  int segment_of_last = -1;
  auto note = [&](int v, int micro) {
    const bool gathers = gathers_parameters_per_pass(plan_, compiled_.layers[static_cast<size_t>(v)]);
    if (!gathers || net_.layer(v).kind == model::OpKind::input) return;
    const bool same_group =
        !gather_order_.empty() && segment_of_last == segment && gather_order_.back().micro == micro &&
        block_in_chunk_[static_cast<size_t>(gather_order_.back().layer)] == block_in_chunk_[static_cast<size_t>(v)];
    const int group = gather_order_.empty() ? 0 : gather_order_.back().group + (same_group ? 0 : 1);
    gather_order_.push_back({.layer = v, .micro = micro, .group = group});
    segment_of_last = segment;
  };
  for (size_t i = 0; i < passes.size(); ++i) {
    for (const Segment& segment_to_run : segments[i]) {
      ++segment;  // a segment's passes never share a group with another's
      if (segment_to_run.run == SegmentRun::forward || segment_to_run.run == SegmentRun::recompute) {
        for (int v : segment_to_run.layers) note(v, passes[i].micro_batch);
      } else if (segment_to_run.run == SegmentRun::backward) {
        const std::vector<int>& layers = segment_to_run.layers;
        for (auto v = layers.rbegin(); v != layers.rend(); ++v) note(*v, passes[i].micro_batch);
      }
    }
  }
}

void StepCompiler::post_gather(int v, int micro, PostedGather& posted) {
  const CompiledLayer& layer = compiled_.layers[static_cast<size_t>(v)];
  const std::vector<int> owners = parameter_gather_owners(plan_, compiled_, v);
  posted.layer = v;
  posted.micro = micro;
  posted.flats.clear();
  posted.gathers.clear();
  for (size_t g = 0; g < layer.parameter_gathers.size(); ++g) {
    // The buffers belong to the layer whose parameters they hold (a tied head's: its table's
    // embedding), so the executor finds them where that layer's parameters are; the gather is
    // this pass's, and is counted under this layer.
    const int owner = owners[g];
    const Collective& gather = layer.parameter_gathers[g];
    const int flat = working_buffer(gather.buffer_bytes, BufferRole::gathered_parameters, owner, -1, micro);
    posted.flats.push_back(flat);
    posted.gathers.push_back(!writer_.keeps_instructions() ? -1
                                                           : writer_.emit({.op = StepOp::redistribute,
                                                                           .stream = Stream::communication,
                                                                           .layer = v,
                                                                           .micro_batch = micro,
                                                                           .reads = facts_.parameter_buffers(owner),
                                                                           .writes = {flat},
                                                                           .collectives = {gather}}));
  }
}

SmallIndexList StepCompiler::gather_parameters(int v, int micro) {
  const CompiledLayer& layer = compiled_.layers[static_cast<size_t>(v)];
  SmallIndexList whole;  // one object returned on every path (no copy)
  if (!gathers_parameters_per_pass(plan_, layer)) return whole;
  // Evaluation (no gather order) gathers where it uses: the redistribute blocks.
  const bool in_order = gathers_taken_ < gather_order_.size();
  if (in_order && (gather_order_[gathers_taken_].layer != v || gather_order_[gathers_taken_].micro != micro)) {
    throw std::logic_error(
        fmt::format("step program: layer '{}' gathers its parameters out of the planned order", net_.layer(v).name));
  }
  PostedGather mine;
  if (!posted_gathers_.empty()) {
    std::swap(mine, posted_gathers_.front());
    posted_gathers_.pop_front();
  } else {
    post_gather(v, micro, mine);
  }
  if (in_order) {
    // This block's gathers were posted while the block before computed (the first block's
    // now); the next block's go out now, to run while this one computes.
    const int group = gather_order_[gathers_taken_].group;
    ++gathers_taken_;
    for (size_t next = gathers_taken_ + posted_gathers_.size();
         next < gather_order_.size() && gather_order_[next].group <= group + 1; ++next) {
      post_gather(gather_order_[next].layer, gather_order_[next].micro, posted_gathers_.emplace_back());
    }
    for (int gather : mine.gathers) {
      emit_kept([&] {
        return StepInstruction{
            .op = StepOp::wait, .stream = Stream::communication, .waits_for = gather, .after = {gather}};
      });
    }
  }
  const int64_t element_bytes = model::bytes_per_element(plan_.dtype);
  const std::vector<int> owners = parameter_gather_owners(plan_, compiled_, v);
  for (size_t g = 0; g < mine.flats.size(); ++g) {
    const int owner = owners[g];
    const std::vector<ParameterShard>& shards = compiled_.layers[static_cast<size_t>(owner)].layouts.parameters;
    SmallIndexList unpacked;
    for (size_t k = 0; k < shards.size(); ++k) {
      unpacked.push_back(working_buffer(shards[k].local_elements * element_bytes, BufferRole::whole_parameter, owner,
                                        static_cast<int>(k), micro));
    }
    emit_kept([&] {
      return StepInstruction{
          .op = StepOp::unpack, .layer = v, .micro_batch = micro, .reads = {mine.flats[g]}, .writes = unpacked};
    });
    writer_.drop(mine.flats[g]);
    for (int b : unpacked) whole.push_back(b);
  }
  return whole;
}

}  // namespace splitbrain::plans::detail
