#include "tests/exec/equivalence/tied_variants.h"

#include "plans/tied_weights.h"

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

bool accepted(const plans::Plan& plan) { return plans::tied_weight_problem(plan).empty(); }

}  // namespace

// Variants of a plan whose tied head splits the samples like its table: the head splitting its
// contraction over those axes instead (it computes with a column block of the rank's table and
// adds that block's gradient back), and the head replicated over them (every rank computes the
// same gradient; only the first of them adds it). Returns whether any was added.
bool append_head_variants(std::vector<plans::Plan>& plans, const plans::Plan& original) {
  bool added = false;
  for (const bool contraction : {true, false}) {
    plans::Plan variant = original;
    const model::Model& net = *variant.model;
    bool changed = false;
    for (int v = 0; v < net.size(); ++v) {
      const int table = net.tied_table_layer(v);
      if (table < 0) continue;
      plans::LayerSharding& head = variant.layers[static_cast<size_t>(v)];
      const plans::LayerSharding& embedding = variant.layers[static_cast<size_t>(table)];
      if (embedding.batch.empty() || !head.in.empty() || head.batch != embedding.batch) continue;
      if (contraction) head.in = head.batch;
      head.batch.clear();
      changed = true;
    }
    variant.family += contraction ? " + head contraction split" : " + head replicated";
    if (!changed || !accepted(variant)) continue;
    plans.push_back(variant);
    added = true;
  }
  return added;
}

void append_tied_variants(std::vector<plans::Plan>& plans) {
  const size_t planned = plans.size();
  bool head_variants = false;
  for (size_t i = 0; i < planned; ++i) {
    const plans::Plan original = plans[i];  // a copy: push_back below may move the list
    if (original.pipe_axis >= 0) continue;
    if (accepted(original)) {
      // Once per run is enough: the first plan whose head splits the samples like its table.
      if (!head_variants) head_variants = append_head_variants(plans, original);
      continue;
    }
    plans::Plan aligned = original;
    const model::Model& net = *aligned.model;
    bool columns_split = false;
    for (int v = 0; v < net.size(); ++v) {
      const int table = net.tied_table_layer(v);
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
      const int table = net.tied_table_layer(v);
      if (table >= 0) align_head(rows, v, table);
    }
    rows.family = original.family + " + vocabulary split";
    if (accepted(rows)) plans.push_back(rows);
  }
}

}  // namespace splitbrain::equivalence
