#pragma once
// Small plan documents the plan-file tests start from and then change one field of.

#include <nlohmann/json.hpp>

namespace splitbrain::plans {

// fashion-vgg on {data: 2, model: 2}: convs split the batch 4 ways, fc1 and fc2 split their
// features over 'model' (SplitBrain), everything else follows its producer.
inline nlohmann::ordered_json base_plan() {
  return nlohmann::ordered_json::parse(R"({
    "format": "splitbrain-plan", "version": 1, "model": "fashion-vgg", "batch": 8,
    "mesh": {"data": 2, "model": 2},
    "default": {"batch": ["data", "model"]},
    "layers": {"fc1": {"batch": ["data"], "out": ["model"]}, "fc2": {"batch": ["data"], "out": ["model"]}}
  })");
}

// fashion-vgg in two stages of {data: 2}: stage 1 starts at conv3.
inline nlohmann::ordered_json pipeline_plan() {
  return nlohmann::ordered_json::parse(R"({
    "format": "splitbrain-plan", "version": 1, "model": "fashion-vgg", "batch": 8,
    "mesh": {"pipe": 2, "data": 2},
    "default": {"batch": ["data"]},
    "pipeline": {"axis": "pipe", "stage_starts": ["conv3"], "micro_batches": 2, "schedule": "gpipe"}
  })");
}

// fashion-vgg in four model chunks on two stages of {data: 2} (interleaved 1F1B): stage 0 runs
// chunks 0 (conv1-pool1) and 2 (fc1-dropout), stage 1 chunks 1 (conv3-flatten) and 3 (fc2, loss).
inline nlohmann::ordered_json interleaved_plan() {
  return nlohmann::ordered_json::parse(R"({
    "format": "splitbrain-plan", "version": 1, "model": "fashion-vgg", "batch": 8,
    "mesh": {"pipe": 2, "data": 2},
    "default": {"batch": ["data"]},
    "pipeline": {"axis": "pipe", "stage_starts": ["conv3", "fc1", "fc2"], "micro_batches": 2,
                 "schedule": "interleaved_1f1b", "virtual_stages": 2}
  })");
}

}  // namespace splitbrain::plans
