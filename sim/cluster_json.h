#pragma once
// The cluster file format, version 1 (documented field by field in sim/clusters/README.md):
//
//   { "format": "splitbrain-cluster", "version": 1,
//     "name": "...", "description": "...", "sources": ["..."],
//     "device": { "name", "peak_flops_per_second": {fp32, fp16, bf16}, "memory_capacity_bytes",
//                 "memory_bandwidth_bytes_per_second",
//                 "efficiency": {gemm|conv|elementwise: {max_efficiency, half_efficiency_flops}},
//                 "memory_efficiency": {max_efficiency, half_efficiency_bytes} },
//     "levels": [ {"name", "fan_out", "link": {bandwidth_bytes_per_second, latency_seconds},
//                  "collective_links": {kind: link}, "uplink_shared"} ],  (the last two optional)
//     "algorithms": {all_gather, reduce_scatter, all_reduce, all_to_all},
//     "placement": [device of rank 0, ...] }            (sources and placement are optional)
//
// The reader is strict: malformed JSON, duplicate or unknown keys, wrong types, missing fields,
// values out of range and unknown algorithm names all throw ClusterError naming the source and
// the field path ("x.json: levels[1].link.bandwidth_bytes_per_second: must be positive...").
// Writing a cluster and reading it back gives an equal Cluster.

#include <filesystem>
#include <string>
#include <string_view>

#include <nlohmann/json_fwd.hpp>

#include "sim/cluster.h"

namespace splitbrain::sim {

inline constexpr std::string_view kClusterFormatName = "splitbrain-cluster";
inline constexpr int kClusterFormatVersion = 1;

// `source` names where the JSON came from (a path, or "preset 'x'") in error messages.
Cluster cluster_from_json(const nlohmann::json& document, std::string_view source);
Cluster parse_cluster_json(std::string_view text, std::string_view source);
Cluster read_cluster_file(const std::filesystem::path& path);

// Fields in the documented order; `placement` only when the cluster has one.
nlohmann::ordered_json cluster_to_json(const Cluster& cluster);
std::string cluster_json_text(const Cluster& cluster);  // 2-space indent, trailing newline
void write_cluster_file(const Cluster& cluster, const std::filesystem::path& path);

}  // namespace splitbrain::sim
