// `splitbrain program`: one rank's training step as the step program the simulator prices and
// the executor runs (plans/step_program.h), as a readable listing or as JSON.

#include <fmt/format.h>

#include <iostream>

#include "model/errors.h"
#include "model/file_io.h"
#include "plans/collective_kind.h"
#include "plans/compiled_plan.h"
#include "plans/memory_walk.h"
#include "plans/plan_json.h"
#include "plans/step_compiler.h"
#include "tools/splitbrain/commands.h"
#include "tools/splitbrain/human_units.h"
#include "tools/splitbrain/number_flags.h"

namespace splitbrain::tools {
namespace {

struct ProgramOptions {
  std::string plan_path;
  int rank = 0;
  std::string json_path;
};

std::string axes_text(const plans::Plan& plan, const std::vector<int>& axes) {
  std::string text;
  for (int axis : axes) text += (text.empty() ? "" : "+") + plan.mesh.axis(axis).name;
  return text;
}

std::string collective_text(const plans::Plan& plan, const plans::Collective& c) {
  return fmt::format("{}[{}] {}", plans::collective_name(c.kind), axes_text(plan, c.axes),
                     human_bytes(static_cast<double>(c.buffer_bytes)));
}

std::string buffers_text(const plans::Plan& plan, const plans::StepProgram& program,
                         const plans::SmallIndexList& buffers) {
  std::string text;
  for (int b : buffers)
    text += fmt::format("{}b{} {}", text.empty() ? "" : ", ", b,
                        plans::buffer_name(*plan.model, program.buffers[static_cast<size_t>(b)]));
  return text;
}

// One line's "what": the buffer, layer and micro-batch, bucket, data and collectives it names.
std::string what_text(const plans::Plan& plan, const plans::StepProgram& program, const plans::StepInstruction& i) {
  using plans::StepOp;
  if (i.op == StepOp::alloc || i.op == StepOp::free) {
    const plans::StepBuffer& b = program.buffers[static_cast<size_t>(i.buffer)];
    return fmt::format("b{} {} ({}, {})", i.buffer, plans::buffer_name(*plan.model, b),
                       human_bytes(static_cast<double>(b.bytes)), plans::memory_category_name(b.category));
  }
  if (i.op == StepOp::wait) return fmt::format("#{}", i.waits_for);
  std::string text;
  if (i.layer >= 0) text += plan.model->layer(i.layer).name;
  if (i.micro_batch >= 0) text += fmt::format(" mb{}", i.micro_batch);
  const bool pass = i.op == StepOp::forward || i.op == StepOp::recompute || i.op == StepOp::backward;
  if (pass && plan.virtual_stages > 1)
    text += fmt::format(" chunk {}", program.chunk_of_layer.at(static_cast<size_t>(i.layer)));
  if (i.bucket >= 0) text += fmt::format("{}bucket {}", text.empty() ? "" : " ", i.bucket);
  for (const plans::Collective& c : plans::collectives_of(i)) text += "  " + collective_text(plan, c);
  if (!i.reads.empty()) text += "  <- " + buffers_text(plan, program, i.reads);
  if (!i.writes.empty()) text += "  -> " + buffers_text(plan, program, i.writes);
  if (i.posted_with_next) text += "  (posted with the next)";
  return text;
}

// "" without a pipeline; ", 1f1b"; ", interleaved_1f1b, chunks 1 and 3 of 4".
std::string schedule_text(const plans::Plan& plan, const plans::StepProgram& program) {
  if (plan.pipe_axis < 0) return "";
  std::string text = fmt::format(", {}", plans::schedule_name(plan.schedule));
  if (plan.virtual_stages <= 1) return text;
  std::string chunks;
  for (int k = 0; k < plan.virtual_stages; ++k) {
    const char* separator = k == 0 ? "" : k + 1 == plan.virtual_stages ? " and " : ", ";
    chunks += fmt::format("{}{}", separator, k * plan.stage_count() + program.stage);
  }
  return text + fmt::format(", chunks {} of {}", chunks, plan.chunk_count());
}

void print_listing(const plans::Plan& plan, const plans::StepProgram& program, const std::string& plan_path) {
  std::cout << fmt::format(
      "step program of rank {} (stage {} of {}{}), plan {}: {}, mesh {}, batch {} in {} micro-batch(es)\n",
      program.rank, program.stage, plan.stage_count(), schedule_text(plan, program), plan_path, plan.model_spec,
      plan.mesh.to_string(), plan.global_batch, plan.micro_batches);
  std::cout << fmt::format("resident (model states): {} buffers\n", program.resident.size());
  for (size_t n = 0; n < program.instructions.size(); ++n) {
    const plans::StepInstruction& i = program.instructions[n];
    std::string after;
    for (int a : i.after) after += fmt::format("{}#{}", after.empty() ? "  after " : ",", a);
    std::cout << fmt::format("{:>5}  {:<4} {:<13} {}{}\n", n, i.stream == plans::Stream::compute ? "comp" : "comm",
                             plans::step_op_name(i.op), what_text(plan, program, i), after);
  }
  const plans::MemoryPeaks peaks = plans::walk_memory(program);
  std::cout << "memory walk peaks:";
  for (int c = 0; c < plans::kMemoryCategories; ++c) {
    const auto category = static_cast<plans::MemoryCategory>(c);
    std::cout << fmt::format(" {} {}", plans::memory_category_name(category),
                             human_bytes(static_cast<double>(peaks.of(category))));
  }
  std::cout << fmt::format("; all together {}\n", human_bytes(static_cast<double>(peaks.total)));
}

nlohmann::ordered_json program_json(const plans::Plan& plan, const plans::StepProgram& program) {
  nlohmann::ordered_json buffers = nlohmann::ordered_json::array();
  for (size_t b = 0; b < program.buffers.size(); ++b) {
    const plans::StepBuffer& buffer = program.buffers[b];
    buffers.push_back({{"id", b},
                       {"name", plans::buffer_name(*plan.model, buffer)},
                       {"bytes", buffer.bytes},
                       {"category", plans::memory_category_name(buffer.category)}});
  }
  nlohmann::ordered_json instructions = nlohmann::ordered_json::array();
  for (const plans::StepInstruction& i : program.instructions) {
    nlohmann::ordered_json entry{{"op", plans::step_op_name(i.op)}, {"stream", plans::stream_name(i.stream)}};
    if (i.buffer >= 0) {
      const plans::StepBuffer& b = program.buffers[static_cast<size_t>(i.buffer)];
      entry["buffer"] = i.buffer;
      entry["bytes"] = b.bytes;
      entry["category"] = plans::memory_category_name(b.category);
    }
    if (i.layer >= 0) entry["layer"] = plan.model->layer(i.layer).name;
    if (i.micro_batch >= 0) entry["micro_batch"] = i.micro_batch;
    if (i.op == plans::StepOp::forward || i.op == plans::StepOp::recompute || i.op == plans::StepOp::backward) {
      entry["chunk"] = program.chunk_of_layer.at(static_cast<size_t>(i.layer));
    }
    if (i.bucket >= 0) entry["bucket"] = i.bucket;
    if (i.waits_for >= 0) entry["waits_for"] = i.waits_for;
    if (i.posted_with_next) entry["posted_with_next"] = true;
    if (i.op != plans::StepOp::alloc && i.op != plans::StepOp::free) {
      entry["reads"] = i.reads;
      entry["writes"] = i.writes;
    }
    if (const std::vector<plans::Collective> all = plans::collectives_of(i); !all.empty()) {
      nlohmann::ordered_json collectives = nlohmann::ordered_json::array();
      for (const plans::Collective& c : all) {
        collectives.push_back({{"kind", plans::collective_name(c.kind)},
                               {"axes", axes_text(plan, c.axes)},
                               {"group_size", c.group_size},
                               {"buffer_bytes", c.buffer_bytes}});
      }
      entry["collectives"] = std::move(collectives);
    }
    entry["after"] = i.after;
    instructions.push_back(std::move(entry));
  }
  const plans::MemoryPeaks peaks = plans::walk_memory(program);
  nlohmann::ordered_json memory;
  for (int c = 0; c < plans::kMemoryCategories; ++c) {
    const auto category = static_cast<plans::MemoryCategory>(c);
    memory[std::string(plans::memory_category_name(category))] = peaks.of(category);
  }
  memory["total"] = peaks.total;
  return {{"format", "splitbrain-step-program"},
          {"version", 1},
          {"model", plan.model_spec},
          {"mesh", plan.mesh.to_string()},
          {"rank", program.rank},
          {"stage", program.stage},
          {"resident", program.resident},
          {"buffers", std::move(buffers)},
          {"instructions", std::move(instructions)},
          {"memory_peaks_bytes", std::move(memory)}};
}

void run_program(const ProgramOptions& options) {
  if (!options.json_path.empty()) check_output_path(options.json_path, "--json");
  const plans::Plan plan = plans::load_plan_file(options.plan_path);
  if (options.rank >= plan.mesh.rank_count()) {
    throw InputError(fmt::format("--rank {}: the plan's mesh {} has ranks 0 to {}", options.rank, plan.mesh.to_string(),
                                 plan.mesh.rank_count() - 1));
  }
  const plans::StepProgram program = plans::compile_step(plan, plans::compile_plan(plan), options.rank);
  if (options.json_path.empty()) {
    print_listing(plan, program, options.plan_path);
  } else {
    write_json_output(options.json_path, program_json(plan, program));
  }
}

}  // namespace

void add_program_command(CLI::App& app) {
  auto options = std::make_shared<ProgramOptions>();
  CLI::App* command = app.add_subcommand(
      "program", "Print one rank's training step as the instruction list the simulator prices and the executor runs");
  command->add_option("--plan", options->plan_path, "Plan file (see plans/README.md)")->type_name("FILE")->required();
  command
      ->add_option("--rank", options->rank,
                   "Which rank's program (ranks of one pipeline stage differ only in their data)")
      ->check(non_negative_integer_for(options->rank))
      ->default_val(0);
  command
      ->add_option("--json", options->json_path,
                   "Write the program as JSON to FILE (- for standard output): buffers, and one object per "
                   "instruction with op, stream, buffer/bytes/category (alloc, free), reads, writes, after")
      ->type_name("FILE|-");
  command->callback([options] { run_program(*options); });
}

}  // namespace splitbrain::tools
