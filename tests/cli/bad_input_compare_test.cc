// Bad input to `compare`, one test per cause: traces whose events are not events, times that are
// negative or beyond any step, a trace of another plan or the two traces the wrong way round, and
// reports of another version, with ranks that are not the mesh's, no step or values whose
// differences overflow. Each exits 2 naming the file and the field, and leaves no output.

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>

#include "tests/cli/run_command.h"

namespace splitbrain::testing_support {
namespace {

const std::string kSource = SPLITBRAIN_SOURCE_DIR;
const std::string kPlan = kSource + "/plans/examples/fashion-vgg-data-parallel-2.json";
const std::string kOtherPlan = kSource + "/plans/examples/fashion-vgg-splitbrain-2.json";

nlohmann::json read_json(const std::string& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return nlohmann::json::parse(text.str());
}

// A prediction and its trace, as `simulate` writes them, and a measurement and measured trace
// made of them (the prediction's numbers; what compare reads of both is the same).
struct Inputs {
  std::string predicted;
  std::string predicted_trace;
  nlohmann::json measured;
  nlohmann::json measured_trace;
};

Inputs simulated(const std::string& name, const std::string& plan = kPlan) {
  Inputs in{write_temp_file(name + "-predicted.json", ""), write_temp_file(name + "-predicted-trace.json", ""), {}, {}};
  const CommandResult r =
      run_splitbrain("simulate --plan " + plan + " --json " + in.predicted + " --trace " + in.predicted_trace);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  in.measured = read_json(in.predicted);
  in.measured["format"] = "splitbrain-measurement";
  in.measured["steps"] = 10;
  in.measured_trace = read_json(in.predicted_trace);
  in.measured_trace["format"] = "splitbrain-measured-trace";
  return in;
}

std::string fresh_out_dir(const std::string& name) {
  const auto dir = scratch_directory() / name;
  std::filesystem::remove_all(dir);
  return dir.string();
}

struct Compared {
  CommandResult result;
  std::string out_dir;
};

// compare of the prediction and `measured`, with the traces when `measured_trace` is given.
Compared compare(const Inputs& in, const nlohmann::json& measured, const nlohmann::json* measured_trace,
                 const std::string& name) {
  const std::string measured_path = write_temp_file(name + "-measured.json", measured.dump());
  std::string traces;
  if (measured_trace != nullptr) {
    traces = " --predicted-trace " + in.predicted_trace + " --measured-trace " +
             write_temp_file(name + "-measured-trace.json", measured_trace->dump());
  }
  Compared c{{}, fresh_out_dir(name + "-out")};
  c.result =
      run_splitbrain("compare --no-figures --out " + c.out_dir + traces + " " + in.predicted + " " + measured_path);
  return c;
}

void expect_refused(const Compared& c, const std::string& message) {
  EXPECT_EQ(c.result.exit_code, 2) << "stdout: " << c.result.out << "\nstderr: " << c.result.err;
  EXPECT_NE(c.result.err.find(message), std::string::npos) << "stderr: " << c.result.err;
  EXPECT_EQ(c.result.err.find("internal error"), std::string::npos) << c.result.err;
  EXPECT_FALSE(std::filesystem::exists(c.out_dir + "/comparison.json")) << c.out_dir;
  EXPECT_FALSE(std::filesystem::exists(c.out_dir + "/trace.json")) << c.out_dir;
}

TEST(CliBadInputCompare, TracesOfThePlanAreComparedAndBothOutputsWritten) {
  const Inputs in = simulated("good");
  const nlohmann::json predicted_trace = read_json(in.predicted_trace);
  EXPECT_EQ(predicted_trace["format"], "splitbrain-predicted-trace");
  EXPECT_EQ(predicted_trace["mesh"], read_json(in.predicted)["mesh"]);
  const Compared c = compare(in, in.measured, &in.measured_trace, "good");
  ASSERT_EQ(c.result.exit_code, 0) << c.result.err;
  EXPECT_TRUE(std::filesystem::exists(c.out_dir + "/comparison.json"));
  EXPECT_TRUE(std::filesystem::exists(c.out_dir + "/trace.json"));
  EXPECT_NE(c.result.out.find("where predicted and measured differ most"), std::string::npos) << c.result.out;
}

TEST(CliBadInputCompare, ATraceEventThatIsNotAnEventIsNamedAndNothingIsWritten) {
  const Inputs in = simulated("not-event");
  // The reproducer as found: no name, one event that is a string.
  const nlohmann::json bare = nlohmann::json::parse(R"({"traceEvents": ["x"]})");
  expect_refused(compare(in, in.measured, &bare, "bare"), "bare-measured-trace.json: format: missing");
  nlohmann::json trace = in.measured_trace;
  trace["traceEvents"] = nlohmann::json::array({"x"});
  expect_refused(compare(in, in.measured, &trace, "string-event"),
                 "string-event-measured-trace.json: traceEvents[0]: must be an object");
  trace = in.measured_trace;
  trace["traceEvents"][3]["pid"] = "zero";
  expect_refused(compare(in, in.measured, &trace, "text-pid"), "text-pid-measured-trace.json: traceEvents[3].pid");
  trace = in.measured_trace;
  trace["traceEvents"][0]["args"] = 7;
  expect_refused(compare(in, in.measured, &trace, "number-args"), "traceEvents[0].args: expected an object");
}

// The index of the trace's first complete event (ph X).
size_t first_complete_event(const nlohmann::json& trace) {
  for (size_t i = 0; i < trace["traceEvents"].size(); ++i) {
    if (trace["traceEvents"][i]["ph"] == "X") return i;
  }
  ADD_FAILURE() << "no complete event";
  return 0;
}

TEST(CliBadInputCompare, TimesNegativeOrBeyondAnyStepAreRefused) {
  const Inputs in = simulated("times");
  const size_t x = first_complete_event(in.measured_trace);
  for (const double microseconds : {-1e300, -1.0, 1e300}) {
    nlohmann::json trace = in.measured_trace;
    trace["traceEvents"][x]["dur"] = microseconds;
    expect_refused(compare(in, in.measured, &trace, "dur"),
                   "dur-measured-trace.json: traceEvents[" + std::to_string(x) + "].dur: expected microseconds from 0");
  }
  nlohmann::json trace = in.measured_trace;
  trace["traceEvents"][x]["ts"] = -5;
  expect_refused(compare(in, in.measured, &trace, "ts"), "traceEvents[" + std::to_string(x) + "].ts");
  trace = in.measured_trace;
  trace["traceEvents"][x].erase("dur");
  expect_refused(compare(in, in.measured, &trace, "no-dur"), "traceEvents[" + std::to_string(x) + "].dur: missing");
  // A run's medians over its steps (run --trace writes them) are seconds too.
  trace = in.measured_trace;
  trace["instruction_seconds_median"] = {{{"forward conv1", 1e300}}, nlohmann::json::object()};
  trace["instruction_seconds_steps"] = 9;
  expect_refused(compare(in, in.measured, &trace, "median"), "instruction_seconds_median[0].forward conv1");
  trace["instruction_seconds_median"][0]["forward conv1"] = 0.001;
  trace["instruction_seconds_steps"] = 0;
  expect_refused(compare(in, in.measured, &trace, "median-steps"), "instruction_seconds_steps: must be a count");
}

TEST(CliBadInputCompare, ATraceOfARankThePlanLacksIsRefused) {
  const Inputs in = simulated("rank");
  nlohmann::json trace = in.measured_trace;
  const size_t x = first_complete_event(trace);
  trace["traceEvents"][x]["pid"] = 2;  // the plan has ranks 0 and 1
  expect_refused(compare(in, in.measured, &trace, "rank"),
                 "traceEvents[" + std::to_string(x) + "].pid: rank 2 is not one of the plan's 2 ranks");
  trace["traceEvents"][x]["pid"] = -1;
  expect_refused(compare(in, in.measured, &trace, "negative-rank"), "traceEvents[" + std::to_string(x) + "].pid");
  trace = in.measured_trace;
  trace["instruction_seconds_median"] = {nlohmann::json::object()};
  trace["instruction_seconds_steps"] = 9;
  expect_refused(compare(in, in.measured, &trace, "medians-of-one"),
                 "instruction_seconds_median: expected one object per rank of the plan (2)");
}

TEST(CliBadInputCompare, ATraceOfAnotherPlanOrTheTracesSwappedAreRefused) {
  const Inputs in = simulated("plan");
  const Inputs other = simulated("other-plan", kOtherPlan);
  expect_refused(compare(in, in.measured, &other.measured_trace, "other"),
                 "other-measured-trace.json and " + in.predicted + " are of different plans");
  nlohmann::json batch = in.measured_trace;
  batch["batch"] = 64;
  expect_refused(compare(in, in.measured, &batch, "batch"), "are of different plans: ");
  // The predicted trace given as the measured one.
  const nlohmann::json predicted_trace = read_json(in.predicted_trace);
  expect_refused(compare(in, in.measured, &predicted_trace, "swapped"),
                 "swapped-measured-trace.json: format: splitbrain-predicted-trace is a predicted trace, given as the "
                 "measured one");
  nlohmann::json unnamed = in.measured_trace;
  unnamed.erase("mesh");
  expect_refused(compare(in, in.measured, &unnamed, "unnamed"),
                 "unnamed-measured-trace.json: mesh: missing, so the trace does not say which plan it is of");
  nlohmann::json versioned = in.measured_trace;
  versioned["version"] = 2;
  expect_refused(compare(in, in.measured, &versioned, "trace-version"), "version: this splitbrain reads traces of");
}

TEST(CliBadInputCompare, AReportOfAnotherVersionOrWithRanksNotItsMeshsIsRefused) {
  const Inputs in = simulated("report");
  nlohmann::json measured = in.measured;
  measured["version"] = 99;
  expect_refused(compare(in, measured, nullptr, "version"),
                 "version-measured.json: version: this splitbrain reads reports of version 1, not 99");
  measured = in.measured;
  measured["ranks"][1]["rank"] = 7;
  expect_refused(compare(in, measured, nullptr, "rank-field"), "rank-field-measured.json: ranks[1].rank: expected 1");
  measured = in.measured;
  measured["ranks"].push_back(measured["ranks"][1]);
  measured["ranks"][2]["rank"] = 2;
  expect_refused(compare(in, measured, nullptr, "extra-rank"),
                 "extra-rank-measured.json: ranks: has 3 entries, but the mesh {\"data\":2} has 2 ranks");
  measured = in.measured;
  measured["steps"] = 0;
  expect_refused(compare(in, measured, nullptr, "no-steps"), "no-steps-measured.json: steps: expected the number");
  measured.erase("steps");
  expect_refused(compare(in, measured, nullptr, "unstepped"), "unstepped-measured.json: field 'steps' is missing");
}

TEST(CliBadInputCompare, ValuesWhoseDifferencesOverflowAreRefusedByName) {
  const Inputs in = simulated("huge");
  nlohmann::json prediction = read_json(in.predicted);
  prediction["iteration_seconds"] = 1e308;
  const std::string huge = write_temp_file("huge-prediction.json", prediction.dump());
  const std::string out = fresh_out_dir("huge-out");
  const std::string measured = write_temp_file("huge-measured.json", in.measured.dump());
  const CommandResult r = run_splitbrain("compare --no-figures --out " + out + " " + huge + " " + measured);
  expect_refused({r, out}, huge + ": iteration_seconds: expected a number from 0 to 1e+09, got 1e+308");
  EXPECT_EQ(r.out.find("inf"), std::string::npos) << r.out;
  nlohmann::json bytes = in.measured;
  bytes["ranks"][0]["comm_bytes_sent"] = 1e300;
  expect_refused(compare(in, bytes, nullptr, "bytes"),
                 "bytes-measured.json: ranks[0].comm_bytes_sent: expected a number");
}

}  // namespace
}  // namespace splitbrain::testing_support
