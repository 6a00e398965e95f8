#include "tests/exec/equivalence/tied_variants.h"

#include "exec/runtime/tied_parameters.h"
#include "plans/compiled_plan.h"

namespace splitbrain::equivalence {
namespace {

// The head's roles that ask for exactly the table block the embedding holds, summed over the
// same axes: its output features are the table's rows (the embedding's `in`), its contraction
// the table's columns (the embedding's `out`).
void align_head(plans::Plan& plan, int head, int table) {
  const plans::LayerSharding embedding = plan.layers[static_cast<size_t>(table)];
  plans::LayerSharding& sharding = plan.layers[static_cast<size_t>(head)];
  sharding.batch = embedding.batch;
  sharding.spatial = embedding.spatial;
  sharding.out = embedding.in;
  sharding.in = embedding.out;
}

bool accepted(const plans::Plan& plan) {
  try {
    exec::check_tied_weights(plan, plans::compile_plan(plan));
    return true;
  } catch (const std::exception&) {
    return false;
  }
}

}  // namespace

// A head that splits its contraction over the axes that split the table's samples: it then
// computes with a column block of the rank's whole table and adds that block's gradient back.
bool append_contraction_split(std::vector<plans::Plan>& plans, const plans::Plan& original) {
  plans::Plan split = original;
  const model::Model& net = *split.model;
  bool changed = false;
  for (int v = 0; v < net.size(); ++v) {
    const int table = exec::tied_table_layer(net, v);
    if (table < 0) continue;
    plans::LayerSharding& head = split.layers[static_cast<size_t>(v)];
    const plans::LayerSharding& embedding = split.layers[static_cast<size_t>(table)];
    if (embedding.batch.empty() || !head.in.empty() || head.batch != embedding.batch) continue;
    head.in = head.batch;
    head.batch.clear();
    changed = true;
  }
  split.family += " + head contraction split";
  if (!changed || !accepted(split)) return false;
  plans.push_back(split);
  return true;
}

void append_tied_variants(std::vector<plans::Plan>& plans) {
  const size_t planned = plans.size();
  bool contraction_split = false;
  for (size_t i = 0; i < planned; ++i) {
    const plans::Plan& original = plans[i];
    if (original.pipe_axis >= 0) continue;
    if (accepted(original)) {
      // Once per run is enough: the first data-parallel-like plan.
      if (!contraction_split) contraction_split = append_contraction_split(plans, original);
      continue;
    }
    plans::Plan aligned = original;
    const model::Model& net = *aligned.model;
    bool columns_split = false;
    for (int v = 0; v < net.size(); ++v) {
      const int table = exec::tied_table_layer(net, v);
      if (table < 0) continue;
      align_head(aligned, v, table);
    }
    aligned.family += " + head aligned";
    if (!accepted(aligned)) continue;
    plans.push_back(aligned);
    // The same with every embedding splitting its rows where it split its columns.
    plans::Plan rows = aligned;
    for (int v = 0; v < net.size(); ++v) {
      if (net.layer(v).kind != model::OpKind::embedding) continue;
      plans::LayerSharding& sharding = rows.layers[static_cast<size_t>(v)];
      if (sharding.out.empty()) continue;
      columns_split = true;
      std::swap(sharding.in, sharding.out);
    }
    if (!columns_split) continue;
    for (int v = 0; v < net.size(); ++v) {
      const int table = exec::tied_table_layer(net, v);
      if (table >= 0) align_head(rows, v, table);
    }
    rows.family = original.family + " + vocabulary split";
    if (accepted(rows)) plans.push_back(rows);
  }
}

}  // namespace splitbrain::equivalence
