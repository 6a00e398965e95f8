#pragma once
// A line per stage of a long command on standard error, so someone watching knows what it is
// doing and how far along it is, while standard output stays the command's results:
//   [calibrate] stage 2/4 (12 s so far): the links: all-reduce, all-gather, ... 8 B to 64 MiB
// The stages are named up front, so the count is known from the first line.

#include <chrono>
#include <ostream>
#include <string>
#include <vector>

namespace splitbrain::tools {

class StageProgress {
 public:
  // `out`: where the lines go, or nullptr to print nothing (a rank other than the one that reports).
  StageProgress(std::string prefix, std::vector<std::string> stages, std::ostream* out);

  // Announces the next stage, which must be the one named `stage` in the constructor's list.
  void begin(const std::string& stage);
  // The closing line, with the seconds the whole took.
  void finish();
  double elapsed_seconds() const;

 private:
  std::string prefix_;
  std::vector<std::string> stages_;
  std::ostream* out_;
  size_t next_ = 0;
  std::chrono::steady_clock::time_point start_ = std::chrono::steady_clock::now();
};

}  // namespace splitbrain::tools
