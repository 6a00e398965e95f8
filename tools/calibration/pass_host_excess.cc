#include "tools/calibration/pass_host_excess.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <map>
#include <numeric>
#include <optional>
#include <span>
#include <string>
#include <tuple>

#include "plans/step_program.h"

namespace splitbrain::tools {
namespace {

using PassKey = std::tuple<plans::PassKind, int, int>;  // kind, micro-batch, layer

// "forward conv1 mb0" -> (forward, 0, conv1's index); none for any other instruction.
std::optional<PassKey> pass_of(const std::string& name, const model::Model& model) {
  const plans::LabelParts parts = plans::split_instruction_label(name);
  if (parts.micro_batch < 0) return std::nullopt;
  for (const plans::PassKind kind : {plans::PassKind::forward, plans::PassKind::backward}) {
    const std::string op = std::string(plans::step_op_name(
                               kind == plans::PassKind::forward ? plans::StepOp::forward : plans::StepOp::backward)) +
                           " ";
    if (!parts.instruction.starts_with(op)) continue;
    const int index = model.find(parts.instruction.substr(op.size()));
    if (index < 0) return std::nullopt;
    return PassKey{kind, parts.micro_batch, index};
  }
  return std::nullopt;
}

}  // namespace

std::vector<PassHostExcess> pass_host_excess(const std::vector<exec::TimelineEvent>& step,
                                             const sim::Prediction& prediction, const model::Model& model) {
  std::map<PassKey, double> predicted;
  for (const sim::ScheduledPass& pass : prediction.passes) {
    for (const sim::LayerSpan& span : pass.layers) {
      if (span.recomputed) continue;
      predicted[{pass.kind, pass.micro_batch, span.layer}] =
          span.host_queue_end_seconds - span.host_queue_start_seconds;
    }
  }
  std::vector<PassHostExcess> excess;
  double queued_until = 0.0;  // the host's mark before the event
  for (const exec::TimelineEvent& event : step) {
    const double host_seconds = event.host_end_seconds - queued_until;
    queued_until = event.host_end_seconds;
    const std::optional<PassKey> key = pass_of(event.name, model);
    if (!key) continue;
    if (const auto found = predicted.find(*key); found != predicted.end()) {
      excess.push_back({std::get<2>(*key), std::get<0>(*key), host_seconds - found->second});
    }
  }
  return excess;
}

double per_pass_host_seconds(const std::vector<PassHostExcess>& excess) {
  std::vector<double> seconds;
  for (const PassHostExcess& pass : excess) seconds.push_back(pass.seconds);
  std::sort(seconds.begin(), seconds.end());
  const size_t tenth = seconds.size() / 10;
  const auto kept = std::span<const double>(seconds).subspan(tenth, seconds.size() - 2 * tenth);
  if (kept.empty()) return 0.0;
  const double mean = std::accumulate(kept.begin(), kept.end(), 0.0) / static_cast<double>(kept.size());
  return std::max(0.0, mean);
}

std::string excess_by_op(const std::vector<PassHostExcess>& excess, const model::Model& model) {
  std::vector<std::string> order;
  std::map<std::string, std::vector<double>> of_group;
  for (const PassHostExcess& pass : excess) {
    const std::string group = fmt::format("{} {}", model::op_name(model.layer(pass.layer).kind),
                                          pass.kind == plans::PassKind::forward ? "forward" : "backward");
    if (!of_group.contains(group)) order.push_back(group);
    of_group[group].push_back(pass.seconds);
  }
  std::vector<std::string> parts;
  for (const std::string& group : order) {
    std::vector<double>& values = of_group[group];
    std::sort(values.begin(), values.end());  // the upper median, as calibrate's figures
    parts.push_back(fmt::format("{} {:+.1f} us ({})", group, values[values.size() / 2] * 1e6, values.size()));
  }
  return fmt::format("{}", fmt::join(parts, ", "));
}

}  // namespace splitbrain::tools
