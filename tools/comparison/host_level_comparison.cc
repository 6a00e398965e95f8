#include "tools/comparison/host_level_comparison.h"

#include <fmt/format.h>

#include <map>
#include <utility>

#include "model/errors.h"

namespace splitbrain::tools {
namespace {

constexpr const char* kMeasuredKey = "comm_bytes_sent_per_host_level";
constexpr const char* kPredictedKey = "comm_bytes_sent_per_level";

// The prediction's level names, innermost first, or an InputError naming the field.
std::vector<std::string> level_names(const nlohmann::json& predicted, const std::string& source) {
  const nlohmann::json& levels = predicted.at("cluster_levels");
  std::vector<std::string> names;
  if (levels.is_array()) {
    for (const nlohmann::json& name : levels) {
      if (!name.is_string()) break;
      names.push_back(name.get<std::string>());
    }
  }
  if (names.empty() || names.size() != levels.size()) {
    throw InputError(fmt::format("{}: cluster_levels: expected a non-empty array of level names", source));
  }
  return names;
}

std::string text_field(const nlohmann::json& doc, const std::string& source, const std::string& where,
                       const char* outer, const char* key) {
  const nlohmann::json* value = doc.contains(outer) ? &doc.at(outer) : nullptr;
  if (value == nullptr || !value->is_object() || !value->contains(key) || !value->at(key).is_string()) {
    throw InputError(fmt::format("{}: {}.{}.{}: expected a string", source, where, outer, key));
  }
  return value->at(key).get<std::string>();
}

int node_of(const nlohmann::json& rank, const std::string& source, const std::string& where) {
  if (!rank.at("node").is_number_integer() || rank.at("node").get<int64_t>() < 0) {
    throw InputError(fmt::format("{}: {}.node: expected an integer >= 0", source, where));
  }
  return rank.at("node").get<int>();
}

// Why the ranks' hosts do not match the prediction's nodes; empty when they do (two ranks share a
// host exactly when the prediction puts them on one node).
std::string placement_mismatch(const std::vector<std::string>& hosts, const std::vector<int>& nodes) {
  std::map<std::string, int> node_of_host;
  std::map<int, std::string> host_of_node;
  for (size_t r = 0; r < hosts.size(); ++r) {
    const auto [host, new_host] = node_of_host.try_emplace(hosts[r], nodes[r]);
    if (!new_host && host->second != nodes[r]) {
      return fmt::format(
          "rank {} runs on host {} with ranks of the prediction's node {}, but the prediction puts it on "
          "node {}",
          r, hosts[r], host->second, nodes[r]);
    }
    const auto [node, new_node] = host_of_node.try_emplace(nodes[r], hosts[r]);
    if (!new_node && node->second != hosts[r]) {
      return fmt::format("the prediction puts rank {} on node {} with ranks that ran on host {}, but it ran on host {}",
                         r, nodes[r], node->second, hosts[r]);
    }
  }
  return {};
}

}  // namespace

HostLevelComparison compare_host_levels(const nlohmann::json& predicted, const std::string& predicted_source,
                                        const nlohmann::json& measured, const std::string& measured_source) {
  HostLevelComparison c;
  const nlohmann::json& predicted_ranks = predicted.at("ranks");
  const nlohmann::json& measured_ranks = measured.at("ranks");
  if (!predicted.contains("cluster_levels")) {
    c.why_not_mapped =
        fmt::format("{} has no cluster_levels (a prediction from before they were written)", predicted_source);
    return c;
  }
  const std::vector<std::string> levels = level_names(predicted, predicted_source);
  std::vector<std::string> hosts;
  std::vector<int> nodes;
  for (size_t r = 0; r < measured_ranks.size(); ++r) {
    const nlohmann::json& m = measured_ranks[r];
    const nlohmann::json& p = predicted_ranks[r];
    const std::string where = fmt::format("ranks[{}]", r);
    if (!m.is_object() || !m.contains(kMeasuredKey) || !m.contains("placement")) {
      c.why_not_mapped = fmt::format("{}: {} has no {} and placement (a run whose hosts were not recorded)",
                                     measured_source, where, kMeasuredKey);
      return c;
    }
    if (!p.is_object() || !p.contains(kPredictedKey) || !p.contains("node")) {
      c.why_not_mapped = fmt::format("{}: {} has no {} and node", predicted_source, where, kPredictedKey);
      return c;
    }
    hosts.push_back(text_field(m, measured_source, where, "placement", "host"));
    nodes.push_back(node_of(p, predicted_source, where));
  }
  if (const std::string mismatch = placement_mismatch(hosts, nodes); !mismatch.empty()) {
    c.why_not_mapped =
        fmt::format("the ranks' hosts are not the prediction's nodes ({}): level {} cannot stand for one host",
                    mismatch, levels.front());
    return c;
  }
  c.mapped = true;
  c.inner_level = levels.front();
  c.outer_levels.assign(levels.begin() + 1, levels.end());
  for (size_t r = 0; r < measured_ranks.size(); ++r) {
    const std::string where = fmt::format("ranks[{}]", r);
    const nlohmann::json& p = predicted_ranks[r];
    const nlohmann::json& m = measured_ranks[r];
    double predicted_outer = 0.0;
    for (const std::string& level : c.outer_levels) {
      predicted_outer += report_number(p, predicted_source, where, {kPredictedKey, level.c_str()}, kMostReportBytes);
    }
    if (predicted_outer > kMostReportBytes) {
      throw InputError(fmt::format("{}: {}.{}: the levels above {} add up to more than {:g} bytes", predicted_source,
                                   where, kPredictedKey, c.inner_level, kMostReportBytes));
    }
    const std::vector<ComparedValue> values = {
        {"within_host",
         report_number(p, predicted_source, where, {kPredictedKey, c.inner_level.c_str()}, kMostReportBytes),
         report_number(m, measured_source, where, {kMeasuredKey, "within_host"}, kMostReportBytes)},
        {"across_hosts", predicted_outer,
         report_number(m, measured_source, where, {kMeasuredKey, "across_hosts"}, kMostReportBytes)}};
    for (const ComparedValue& v : values) c.equal = c.equal && v.predicted == v.measured;
    c.ranks.push_back(values);
  }
  return c;
}

nlohmann::ordered_json host_level_comparison_to_json(const HostLevelComparison& c) {
  if (!c.mapped) return {{"mapped", false}, {"why_not", c.why_not_mapped}};
  nlohmann::ordered_json ranks = nlohmann::ordered_json::array();
  for (const auto& values : c.ranks) {
    nlohmann::ordered_json rank = nlohmann::ordered_json::object();
    for (const ComparedValue& v : values) rank[v.name] = {{"predicted", v.predicted}, {"measured", v.measured}};
    ranks.push_back(std::move(rank));
  }
  return {{"mapped", true},
          {"within_host_level", c.inner_level},
          {"across_hosts_levels", c.outer_levels},
          {"ranks", ranks},
          {"equal", c.equal}};
}

}  // namespace splitbrain::tools
