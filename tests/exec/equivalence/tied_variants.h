#pragma once
// The executor refuses plans whose tied output head would need a table block or a gradient sum
// that the plan does not list (exec/runtime/tied_parameters.h). The planner emits such plans
// for GPT (model-parallel, Gholami grids: the head splits the vocabulary where the table splits
// its columns), and they are the ones that split the attention heads. So that those layers are
// still checked against the 1-rank run, every such plan is also run with the head's sharding
// aligned to its embedding's; and a plan whose embeddings split their columns also runs with
// them splitting their rows instead (the vocabulary and the positions: partial sums). One plan
// whose head splits the samples like its table also runs with the head splitting its
// contraction over those axes instead (a column block of the rank's table), and with the head
// replicated over them (only the first replica adds its gradient).

#include <vector>

#include "plans/plan.h"

namespace splitbrain::equivalence {

// Appends the variants of `plans` described above (none for models without a tied weight, nor
// for pipelines: there the head and the table sit on different stages).
void append_tied_variants(std::vector<plans::Plan>& plans);

}  // namespace splitbrain::equivalence
