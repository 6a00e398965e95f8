// The progress lines of a long command (calibrate): numbered out of the stages named up front,
// with the seconds so far, a stage left out keeping the others' numbers, and nothing printed
// where there is nowhere to print.

#include "tools/splitbrain/stage_progress.h"

#include <gtest/gtest.h>

#include <sstream>
#include <stdexcept>

namespace splitbrain::tools {
namespace {

TEST(StageProgress, NumbersEachStageOutOfAllNamedUpFront) {
  std::ostringstream out;
  StageProgress progress("[calibrate]", {"kernels", "links", "problems"}, &out);
  progress.begin("kernels");
  progress.begin("links");
  progress.begin("problems");
  progress.finish();
  const std::string text = out.str();
  EXPECT_NE(text.find("[calibrate] stage 1/3 (0 s so far): kernels\n"), std::string::npos) << text;
  EXPECT_NE(text.find("[calibrate] stage 2/3 ("), std::string::npos) << text;
  EXPECT_NE(text.find("s so far): problems\n"), std::string::npos) << text;
  EXPECT_NE(text.find("[calibrate] done in "), std::string::npos) << text;
}

TEST(StageProgress, AStageLeftOutKeepsTheNumbersOfTheOthers) {
  std::ostringstream out;
  StageProgress progress("[calibrate]", {"kernels", "cache", "problems"}, &out);
  progress.begin("kernels");
  progress.begin("problems");
  EXPECT_NE(out.str().find("stage 3/3"), std::string::npos) << out.str();
  EXPECT_EQ(out.str().find("stage 2/3"), std::string::npos) << out.str();
}

TEST(StageProgress, AStageOutOfOrderOrUnnamedIsABug) {
  StageProgress progress("[calibrate]", {"kernels", "links"}, nullptr);
  progress.begin("links");
  EXPECT_THROW(progress.begin("kernels"), std::logic_error);
  EXPECT_THROW(progress.begin("unnamed"), std::logic_error);
}

}  // namespace
}  // namespace splitbrain::tools
