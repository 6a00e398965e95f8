// compare's instruction-by-instruction differences: each rank's events summed per instruction
// across micro-batches and rows, the host's queuing row and the buckets' reductions left out,
// largest difference first; a measured trace's medians over its steps preferred to its one step;
// and a malformed trace named with its event.

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "model/errors.h"
#include "tools/comparison/trace_differences.h"

namespace splitbrain::tools {
namespace {

nlohmann::json event(int pid, int tid, const std::string& name, double microseconds) {
  return {{"name", name}, {"ph", "X"}, {"pid", pid}, {"tid", tid}, {"ts", 0.0}, {"dur", microseconds}};
}

nlohmann::json trace(const std::vector<nlohmann::json>& events) {
  nlohmann::json all = {{"name", "process_name"}, {"ph", "M"}, {"pid", 0}, {"args", {{"name", "rank 0"}}}};
  return {{"traceEvents", [&] {
             nlohmann::json list = nlohmann::json::array({all});
             for (const auto& e : events) list.push_back(e);
             return list;
           }()}};
}

const InstructionDifference* find(const std::vector<InstructionDifference>& all, int rank, const std::string& name) {
  for (const InstructionDifference& d : all) {
    if (d.rank == rank && d.instruction == name) return &d;
  }
  return nullptr;
}

TEST(TraceDifferences, SumsEachRanksInstructionsAndPutsTheLargestMissFirst) {
  const nlohmann::json predicted = trace({
      event(0, 0, "forward conv1 mb0", 100),
      event(0, 0, "forward conv1 mb1", 100),
      event(0, 1, "forward conv1 mb1", 50),   // the collectives inside the op, on the communication row
      event(0, 2, "forward conv1 mb1", 999),  // when the host queued it: not time spent
      event(0, 1, "redistribute pool2 mb0", 200),
      event(0, 1, "reduce bucket 0", 5000),  // an overlapped reduction's stream time: not compared
      event(1, 0, "forward conv1 mb0", 100),
      // A rank the measurement lacks.
      event(7, 0, "forward conv1 mb0", 100),
  });
  const nlohmann::json measured = trace({
      event(0, 0, "forward conv1 mb0", 120),
      event(0, 0, "forward conv1 mb1", 110),
      event(0, 1, "redistribute pool2 mb0", 1000),
      event(0, 1, "load_input data mb0", 30),  // unpriced: predicted 0
      event(0, 1, "reduce bucket 0", 10),
      event(1, 0, "forward conv1 mb0", 100),
  });
  const std::vector<InstructionDifference> all = instruction_differences(predicted, "p.json", measured, "m.json");
  ASSERT_EQ(all.size(), 4u);
  EXPECT_EQ(all[0].instruction, "redistribute pool2");  // -800 us
  EXPECT_NEAR(all[0].difference_seconds(), -800e-6, 1e-12);
  const InstructionDifference* conv = find(all, 0, "forward conv1");
  ASSERT_NE(conv, nullptr);
  EXPECT_NEAR(conv->predicted_seconds, 250e-6, 1e-12);
  EXPECT_NEAR(conv->measured_seconds, 230e-6, 1e-12);
  const InstructionDifference* input = find(all, 0, "load_input data");
  ASSERT_NE(input, nullptr);
  EXPECT_EQ(input->predicted_seconds, 0.0);
  EXPECT_NEAR(input->measured_seconds, 30e-6, 1e-12);
  EXPECT_NE(find(all, 1, "forward conv1"), nullptr);
  EXPECT_EQ(find(all, 7, "forward conv1"), nullptr);
  EXPECT_EQ(find(all, 0, "reduce bucket 0"), nullptr);
  for (size_t i = 1; i < all.size(); ++i) {
    EXPECT_GE(std::abs(all[i - 1].difference_seconds()), std::abs(all[i].difference_seconds()));
  }
  const nlohmann::ordered_json rows = instruction_differences_to_json(all);
  ASSERT_EQ(rows.size(), all.size());
  EXPECT_EQ(rows[0]["instruction"], "redistribute pool2");
  EXPECT_EQ(rows[0]["rank"], 0);
}

TEST(TraceDifferences, AMeasuredTraceIsReadFromItsMediansOverTheRunsSteps) {
  const nlohmann::json predicted =
      trace({event(0, 0, "forward fc2 mb0", 13000), event(1, 0, "forward fc2 mb0", 13000)});
  // The trace's one step held a pause on rank 0 (25 ms); the medians over the run's steps did not.
  nlohmann::json measured = trace({event(0, 0, "forward fc2 mb0", 25000), event(1, 0, "forward fc2 mb0", 13500)});
  measured["instruction_seconds_median"] = {{{"forward fc2", 0.0138}, {"reduce bucket 0", 0.040}},
                                            {{"forward fc2", 0.0135}}};
  measured["instruction_seconds_steps"] = 9;
  const std::vector<InstructionDifference> all = instruction_differences(predicted, "p.json", measured, "m.json");
  ASSERT_EQ(all.size(), 2u);
  EXPECT_DOUBLE_EQ(find(all, 0, "forward fc2")->measured_seconds, 0.0138);
  EXPECT_DOUBLE_EQ(find(all, 1, "forward fc2")->measured_seconds, 0.0135);
  EXPECT_EQ(find(all, 0, "reduce bucket 0"), nullptr);
  EXPECT_EQ(median_steps_of(measured, "m.json"), 9);
  EXPECT_EQ(median_steps_of(predicted, "p.json"), std::nullopt);

  nlohmann::json uncounted = measured;
  uncounted.erase("instruction_seconds_steps");
  try {
    instruction_differences(predicted, "p.json", uncounted, "m.json");
    FAIL() << "expected InputError";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("m.json: instruction_seconds_steps"), std::string::npos) << e.what();
  }
  measured["instruction_seconds_median"][1]["forward fc2"] = "13.5 ms";
  try {
    instruction_differences(predicted, "p.json", measured, "m.json");
    FAIL() << "expected InputError";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("m.json: instruction_seconds_median[1].forward fc2"), std::string::npos)
        << e.what();
  }
  measured["instruction_seconds_median"] = nlohmann::json::object();
  EXPECT_THROW(instruction_differences(predicted, "p.json", measured, "m.json"), InputError);
}

TEST(TraceDifferences, AMalformedTraceIsNamedWithItsEvent) {
  nlohmann::json broken = trace({event(0, 0, "forward conv1 mb0", 100)});
  broken["traceEvents"][1].erase("dur");
  try {
    instruction_differences(broken, "predicted-trace.json", trace({}), "m.json");
    FAIL() << "expected InputError";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("predicted-trace.json: traceEvents[1]"), std::string::npos) << e.what();
  }
  EXPECT_THROW(instruction_differences(trace({}), "p.json", nlohmann::json::object(), "measured-trace.json"),
               InputError);
}

}  // namespace
}  // namespace splitbrain::tools
