#pragma once
// Predicted against measured bytes per network level. The prediction splits each rank's bytes by
// cluster level (comm_bytes_sent_per_level, innermost first: cluster_levels); the measurement by
// host (comm_bytes_sent_per_host_level: within_host, across_hosts), both by the rule of
// plans::sent_spans. They line up when the ranks share hosts exactly as the prediction's cluster
// puts them in its innermost units (each rank's `node`): then within_host is level 0 and
// across_hosts the sum of the levels above, and the two must be equal to the byte.

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "tools/comparison/comparison.h"

namespace splitbrain::tools {

struct HostLevelComparison {
  bool mapped = false;
  std::string why_not_mapped;             // when !mapped: why the levels cannot be lined up
  std::string inner_level;                // the prediction's level 0 ("node")
  std::vector<std::string> outer_levels;  // the levels above it ("cluster")
  // Per rank: {within_host vs level 0, across_hosts vs the levels above}, bytes per step.
  std::vector<std::vector<ComparedValue>> ranks;
  bool equal = true;  // every value equal (true when not mapped: nothing compared)
};

// Reads both reports' ranks (compare_reports checked them first: as many, of one plan). A report without the fields (an
// older report, or a run whose hosts were not recorded) is not an error: the result says why
// nothing was compared. A field present but malformed is an InputError naming file and field.
HostLevelComparison compare_host_levels(const nlohmann::json& predicted, const std::string& predicted_source,
                                        const nlohmann::json& measured, const std::string& measured_source);

nlohmann::ordered_json host_level_comparison_to_json(const HostLevelComparison& comparison);

}  // namespace splitbrain::tools
