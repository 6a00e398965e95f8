#include "tools/comparison/host_wait_comparison.h"

#include <fmt/format.h>

#include <algorithm>
#include <utility>

#include "model/errors.h"
#include "tools/comparison/comparison.h"

namespace splitbrain::tools {
namespace {

constexpr const char* kMeasuredKey = "host_waits_per_step";
constexpr const char* kPredictedKey = "host_wait_instructions";

// A list of instruction indices (integers >= 0, ascending) at `value`, or an InputError naming
// `source` and `where`.
std::vector<int> instruction_list(const nlohmann::json& value, const std::string& source, const std::string& where) {
  std::vector<int> list;
  const auto fail = [&] {
    return InputError(
        fmt::format("{}: {}: expected an ascending array of instruction numbers (integers >= 0)", source, where));
  };
  if (!value.is_array()) throw fail();
  for (const nlohmann::json& item : value) {
    if (!item.is_number_integer() || item.get<int64_t>() < 0 || item.get<int64_t>() > (int64_t{1} << 30)) throw fail();
    list.push_back(item.get<int>());
  }
  if (!std::is_sorted(list.begin(), list.end())) throw fail();
  return list;
}

}  // namespace

bool HostWaitComparison::equal() const {
  return std::all_of(ranks.begin(), ranks.end(), [](const RankHostWaits& r) { return r.equal(); });
}

HostWaitComparison compare_host_waits(const nlohmann::json& predicted, const std::string& predicted_source,
                                      const nlohmann::json& measured, const std::string& measured_source) {
  HostWaitComparison c;
  const nlohmann::json& measured_ranks = measured.at("ranks");
  const nlohmann::json& predicted_ranks = predicted.at("ranks");
  for (const nlohmann::json& m : measured_ranks) {
    if (!m.is_object() || !m.contains(kMeasuredKey)) return c;
  }
  const nlohmann::json* stages = predicted.contains("stages") ? &predicted.at("stages") : nullptr;
  if (stages == nullptr || !stages->is_array() || stages->empty() || !stages->at(0).is_object() ||
      !stages->at(0).contains(kPredictedKey)) {
    c.why_not = fmt::format("{} has no stages[].{} (a prediction from before they were written)", predicted_source,
                            kPredictedKey);
    return c;
  }
  c.compared = true;
  for (size_t r = 0; r < measured_ranks.size(); ++r) {
    const std::string where = fmt::format("ranks[{}]", r);
    const double stage_number = report_number(predicted_ranks[r], predicted_source, where, {"stage"}, kMostReportCount);
    const auto stage = static_cast<size_t>(std::min(stage_number, static_cast<double>(stages->size())));
    if (stage >= stages->size() || !stages->at(stage).is_object() || !stages->at(stage).contains(kPredictedKey)) {
      throw InputError(fmt::format("{}: {}.stage: {} has no stages[{}].{}", predicted_source, where, stage_number,
                                   stage_number, kPredictedKey));
    }
    RankHostWaits rank;
    rank.rank = static_cast<int>(r);
    rank.predicted = instruction_list(stages->at(stage).at(kPredictedKey), predicted_source,
                                      fmt::format("stages[{}].{}", stage, kPredictedKey));
    const nlohmann::json& waits = measured_ranks[r].at(kMeasuredKey);
    rank.measured_per_step =
        report_number(measured_ranks[r], measured_source, where, {kMeasuredKey, "instructions"}, kMostReportCount);
    if (!waits.is_object() || !waits.contains("at")) {
      throw InputError(fmt::format("{}: {}.{}.at: missing", measured_source, where, kMeasuredKey));
    }
    rank.measured = instruction_list(waits.at("at"), measured_source, fmt::format("{}.{}.at", where, kMeasuredKey));
    c.ranks.push_back(std::move(rank));
  }
  return c;
}

nlohmann::ordered_json host_wait_comparison_to_json(const HostWaitComparison& c) {
  if (!c.compared) return {{"compared", false}, {"why_not", c.why_not.empty() ? "the host computes" : c.why_not}};
  nlohmann::ordered_json ranks = nlohmann::ordered_json::array();
  for (const RankHostWaits& r : c.ranks) {
    ranks.push_back({{"rank", r.rank},
                     {"predicted", r.predicted},
                     {"measured", r.measured},
                     {"measured_per_step", r.measured_per_step},
                     {"equal", r.equal()}});
  }
  return {{"compared", true}, {"ranks", ranks}, {"equal", c.equal()}};
}

}  // namespace splitbrain::tools
