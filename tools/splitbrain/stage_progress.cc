#include "tools/splitbrain/stage_progress.h"

#include <fmt/format.h>

#include <algorithm>
#include <stdexcept>
#include <utility>

namespace splitbrain::tools {

StageProgress::StageProgress(std::string prefix, std::vector<std::string> stages, std::ostream* out)
    : prefix_(std::move(prefix)), stages_(std::move(stages)), out_(out) {}

double StageProgress::elapsed_seconds() const {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
}

void StageProgress::begin(const std::string& stage) {
  // A stage announced out of its order would number the lines wrongly: a bug of the caller.
  const auto at = std::find(stages_.begin() + static_cast<std::ptrdiff_t>(next_), stages_.end(), stage);
  if (at == stages_.end()) throw std::logic_error(fmt::format("{}: no stage '{}' left to begin", prefix_, stage));
  next_ = static_cast<size_t>(at - stages_.begin()) + 1;
  if (out_ == nullptr) return;
  *out_ << fmt::format("{} stage {}/{} ({:.0f} s so far): {}\n", prefix_, next_, stages_.size(), elapsed_seconds(),
                       stage)
        << std::flush;
}

void StageProgress::finish() {
  if (out_ == nullptr) return;
  *out_ << fmt::format("{} done in {:.0f} s\n", prefix_, elapsed_seconds()) << std::flush;
}

}  // namespace splitbrain::tools
