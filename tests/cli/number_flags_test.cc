// Every number flag of every command refuses 0 (or -1), NaN, infinity, 2^63 and an empty string
// with exit 2, naming the flag and what it must be, before any work starts (CLI11's own checks
// let NaN through, which then ran with the plan's default, and clamped integers too large); the
// checks themselves refuse 10^20, fractions and trailing text too.

#include <gtest/gtest.h>

#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "tests/cli/run_command.h"
#include "tools/splitbrain/number_flags.h"

namespace splitbrain::testing_support {
namespace {

const std::string kSource = SPLITBRAIN_SOURCE_DIR;
const std::string kPlan = kSource + "/plans/examples/fashion-vgg-data-parallel-2.json";

struct NumberFlag {
  std::string command;  // the command with its required flags
  std::string flag;
  bool integer = true;        // a fraction is refused too
  bool zero_allowed = false;  // 0 is a valid value
  std::string message;        // what the error says it must be
};

std::vector<NumberFlag> number_flags() {
  const std::string plan = "plan --model fashion-vgg --devices 2 --batch 8";
  const std::string run = "run --plan " + kPlan;
  return {
      {"inspect --model fashion-vgg", "--batch", true, false, "must be a positive integer"},
      {"plan --model fashion-vgg --batch 8", "--devices", true, false, "must be a positive integer"},
      {"plan --model fashion-vgg --devices 2", "--batch", true, false, "must be a positive integer"},
      {plan, "--top", true, false, "must be a positive integer"},
      {plan, "--explain", true, false, "must be a positive integer"},
      {plan, "--threads", true, false, "must be a positive integer"},
      {plan + " --export torchrun --export-dir /nonexistent", "--export-top", true, false,
       "must be a positive integer"},
      {"program --plan " + kPlan, "--rank", true, true, "must be a non-negative integer"},
      {run, "--iters", true, false, "must be a positive integer"},
      {run, "--warmup", true, true, "must be a non-negative integer"},
      {run, "--threads", true, false, "must be a positive integer"},
      {run, "--log-every", true, false, "must be a positive integer"},
      {run + " --checkpoint /nonexistent", "--checkpoint-every", true, false, "must be a positive integer"},
      {run, "--epochs", false, false, "must be a finite number above 0"},
      {run, "--lr", false, false, "must be a finite number above 0"},
      {run, "--watchdog-seconds", false, true, "must be a finite number of at least 0"},
      {"calibrate", "--repeats", true, false, "must be a positive integer"},
      {"calibrate", "--devices", true, false, "must be a positive integer"},
      {"calibrate", "--batch", true, false, "must be a positive integer"},
  };
}

// Through the command line, the values that reach each kind of check (the full table of values
// is run against the checks themselves below, in-process).
TEST(NumberFlags, EveryFlagRefusesBadValuesNamingTheFlag) {
  int refused = 0;
  for (const NumberFlag& f : number_flags()) {
    std::vector<std::string> values = {"nan", "inf", "''", f.zero_allowed ? "-1" : "0"};
    if (f.integer) values.push_back("9223372036854775808");
    for (const std::string& value : values) {
      const CommandResult r = run_splitbrain(f.command + " " + f.flag + " " + value);
      const std::string what = f.command + " " + f.flag + " " + value;
      EXPECT_EQ(r.exit_code, 2) << what << "\nstderr: " << r.err;
      EXPECT_NE(r.err.find(f.flag + ": " + f.message), std::string::npos) << what << "\nstderr: " << r.err;
      ++refused;
    }
  }
  EXPECT_GT(refused, 80);
}

// The checks on every value of the table: 0, -1, NaN, infinity, 2^63, 10^20, an empty string,
// trailing text, a fraction and an exponent for an integer.
TEST(NumberFlags, ChecksRefuseEveryValueOfTheTable) {
  const auto refuses = [](const CLI::Validator& check, std::string text) { return !check(text).empty(); };
  const CLI::Validator positive = tools::integer_from(1, std::numeric_limits<int64_t>::max());
  const CLI::Validator small = tools::integer_from(1, 1024);
  for (const char* bad : {"0", "-1", "nan", "inf", "-inf", "9223372036854775808", "100000000000000000000", "", "12abc",
                          "1.5", "1e3", " 3"}) {
    EXPECT_TRUE(refuses(positive, bad)) << "'" << bad << "'";
  }
  EXPECT_TRUE(refuses(small, "1025"));
  EXPECT_FALSE(refuses(small, "1024"));
  EXPECT_FALSE(refuses(positive, "9223372036854775807"));
  EXPECT_FALSE(refuses(tools::integer_from(0, 5), "0"));
  for (const char* bad : {"0", "-1", "nan", "-nan", "inf", "-inf", "1e400", "", "3x", "0x"}) {
    EXPECT_TRUE(refuses(tools::positive_finite(), bad)) << "'" << bad << "'";
  }
  for (const char* good : {"1e-3", "0.5", "100000000000000000000", "3"}) {
    EXPECT_FALSE(refuses(tools::positive_finite(), good)) << good;
  }
  EXPECT_FALSE(refuses(tools::non_negative_finite(), "0"));
  EXPECT_TRUE(refuses(tools::non_negative_finite(), "-0.5"));
  EXPECT_TRUE(refuses(tools::non_negative_finite(), "nan"));
}

// The checks refuse only what is wrong: a valid value passes them (the command then goes on to
// its own checks, here a plan rank beyond the mesh).
TEST(NumberFlags, ValidValuesPassTheChecks) {
  const CommandResult rank = run_splitbrain("program --plan " + kPlan + " --rank 0");
  EXPECT_EQ(rank.exit_code, 0) << rank.err;
  const CommandResult big = run_splitbrain("inspect --model fashion-vgg --batch 9223372036854775807");
  EXPECT_EQ(big.err.find("must be a positive integer"), std::string::npos) << big.err;
}

}  // namespace
}  // namespace splitbrain::testing_support
