#include "plans/program_writer.h"

#include <fmt/format.h>

#include <algorithm>
#include <stdexcept>
#include <utility>

namespace splitbrain::plans {

ProgramWriter::ProgramWriter(const Plan& plan, int rank, bool keep_instructions)
    : net_(*plan.model), keep_instructions_(keep_instructions) {
  program_.rank = rank;
  program_.stage = plan.pipe_axis >= 0 ? plan.mesh.coordinate(rank, plan.pipe_axis) : 0;
  program_.chunk_of_layer = plan.stage_of_layer;
  program_.chunk_of_layer.resize(static_cast<size_t>(net_.size()), 0);
  if (keep_instructions_) {
    // A long pipeline's program holds millions of instructions: room for a generous estimate up
    // front saves copying them at each growth (the pages past the end are never touched).
    constexpr int64_t kInstructionsPerLayerPass = 8;
    int64_t layers_here = 0;
    for (int chunk : program_.chunk_of_layer) layers_here += plan.stage_of_chunk(chunk) == program_.stage ? 1 : 0;
    program_.instructions.reserve(
        static_cast<size_t>(kInstructionsPerLayerPass * layers_here * std::max(plan.micro_batches, 1) + 64));
  }
}

std::string ProgramWriter::name_of(int buffer) const {
  return buffer_name(net_, program_.buffers[static_cast<size_t>(buffer)]);
}

void ProgramWriter::count(int buffer, bool allocate) {
  counter_.change(program_.buffers[static_cast<size_t>(buffer)], allocate);
  if (allocate && counter_.peaks().total > limit_bytes_) throw MemoryLimitReached{};
}

int ProgramWriter::resident(StepBuffer buffer) {
  program_.buffers.push_back(buffer);
  holders_.push_back(1);
  const int id = static_cast<int>(program_.buffers.size()) - 1;
  program_.resident.push_back(id);
  count(id, true);
  return id;
}

int ProgramWriter::make(StepBuffer buffer) {
  program_.buffers.push_back(buffer);
  holders_.push_back(1);
  const int id = static_cast<int>(program_.buffers.size()) - 1;
  count(id, true);
  if (keep_instructions_) emit({.op = StepOp::alloc, .buffer = id, .writes = {id}});
  return id;
}

void ProgramWriter::hold(int buffer) {
  if (buffer < 0) return;
  if (holders_.at(static_cast<size_t>(buffer)) <= 0) {
    throw std::logic_error(
        fmt::format("step program: buffer {} ('{}') held after it was freed", buffer, name_of(buffer)));
  }
  ++holders_[static_cast<size_t>(buffer)];
}

void ProgramWriter::drop(int buffer) {
  if (buffer < 0) return;
  int& holders = holders_.at(static_cast<size_t>(buffer));
  if (holders <= 0) {
    throw std::logic_error(
        fmt::format("step program: buffer {} ('{}') dropped more often than held", buffer, name_of(buffer)));
  }
  if (--holders == 0) {
    count(buffer, false);
    if (keep_instructions_) emit({.op = StepOp::free, .buffer = buffer, .writes = {buffer}});
  }
}

int ProgramWriter::emit(StepInstruction instruction) {
  const int index = emitted_++;
  if (keep_instructions_) {
    program_.instructions.push_back(std::move(instruction));
  } else if (instruction.op == StepOp::send) {
    unkept_reads_[index] = std::move(instruction.reads);
  }
  return index;
}

int ProgramWriter::add_pass_operands(PassOperands operands) {
  program_.pass_operands.push_back(std::move(operands));
  return static_cast<int>(program_.pass_operands.size()) - 1;
}

void ProgramWriter::wait_and_release(int instruction) {
  SmallIndexList read;
  if (keep_instructions_) {
    read = program_.instructions.at(static_cast<size_t>(instruction)).reads;
  } else {
    read = std::move(unkept_reads_.at(instruction));
    unkept_reads_.erase(instruction);
  }
  emit({.op = StepOp::wait, .stream = Stream::communication, .waits_for = instruction, .after = {instruction}});
  for (int buffer : read) drop(buffer);
}

StepProgram ProgramWriter::finish() {
  for (int id : program_.resident) --holders_[static_cast<size_t>(id)];  // their own holder: no free
  for (size_t b = 0; b < holders_.size(); ++b) {
    if (holders_[b] != 0) {
      throw std::logic_error(fmt::format("step program: buffer {} ('{}') is still held at the end of the step", b,
                                         name_of(static_cast<int>(b))));
    }
  }
  // Dependencies: an instruction waits for the last writer of every buffer it touches and, when
  // it writes (or frees) a buffer, for the readers since that write; only those on the other
  // stream are listed, the order on its own stream being implied.
  // The readers since each buffer's last write, as lists threaded through one array (a long
  // pipeline's program has millions of reads; a vector per buffer cost more than the rest).
  struct Reader {
    int instruction = -1;
    int next = -1;  // the previous reader of the same buffer, or -1
  };
  std::vector<int> last_writer(program_.buffers.size(), -1);
  std::vector<int> latest_reader(program_.buffers.size(), -1);  // into `readers`
  std::vector<Reader> readers;
  size_t read_count = 0;
  for (const StepInstruction& instruction : program_.instructions) read_count += instruction.reads.size();
  readers.reserve(read_count);
  for (size_t i = 0; i < program_.instructions.size(); ++i) {
    StepInstruction& instruction = program_.instructions[i];
    SmallIndexList depends = instruction.after;
    auto note = [&](int other) {
      if (other >= 0 && program_.instructions[static_cast<size_t>(other)].stream != instruction.stream) {
        depends.push_back(other);
      }
    };
    for (int b : instruction.reads) note(last_writer[static_cast<size_t>(b)]);
    for (int b : instruction.writes) {
      note(last_writer[static_cast<size_t>(b)]);
      for (int r = latest_reader[static_cast<size_t>(b)]; r >= 0; r = readers[static_cast<size_t>(r)].next) {
        note(readers[static_cast<size_t>(r)].instruction);
      }
    }
    std::sort(depends.begin(), depends.end());
    depends.erase(std::unique(depends.begin(), depends.end()), depends.end());
    instruction.after = std::move(depends);
    for (int b : instruction.reads) {
      int& latest = latest_reader[static_cast<size_t>(b)];
      readers.push_back({static_cast<int>(i), latest});
      latest = static_cast<int>(readers.size()) - 1;
    }
    for (int b : instruction.writes) {
      last_writer[static_cast<size_t>(b)] = static_cast<int>(i);
      latest_reader[static_cast<size_t>(b)] = -1;
    }
  }
  return std::move(program_);
}

}  // namespace splitbrain::plans
