#include "plans/redistribution.h"

#include <fmt/format.h>

#include <algorithm>
#include <stdexcept>
#include <string>
#include <utility>

#include "plans/plan_error.h"

namespace splitbrain::plans {
namespace {

using Axes = std::vector<int>;

bool is_prefix(const Axes& a, const Axes& b) {
  return a.size() <= b.size() && std::equal(a.begin(), a.end(), b.begin());
}

bool contains(const Axes& axes, int axis) { return std::find(axes.begin(), axes.end(), axis) != axes.end(); }

std::size_t common_prefix(const Axes& a, const Axes& b) {
  std::size_t n = 0;
  while (n < a.size() && n < b.size() && a[n] == b[n]) ++n;
  return n;
}

void validate_named(const TensorLayout& layout, const Mesh& mesh, std::span<const int64_t> global_shape,
                    const char* which) {
  try {
    validate(layout, mesh, global_shape);
  } catch (const PlanError& e) {
    throw PlanError(fmt::format("redistribute {}: {}", which, e.what()));
  }
}

// The greedy loop described in the header. `current` walks from `from` to `target`; every rule
// keeps it a valid layout (a dim only gains axes that extend a prefix of its target list, and
// prefixes of a valid split divide the extent).
class Planner {
 public:
  Planner(const TensorLayout& from, const TensorLayout& to, const Mesh& mesh, std::span<const int64_t> global_shape,
          int64_t element_bytes)
      : current_(from), target_(to), mesh_(mesh), shape_(global_shape), element_bytes_(element_bytes) {}

  std::vector<RedistributionStep> run() {
    // Each turn removes a misplaced axis, places one, or reduces a partial axis, so the loop
    // ends within a few turns per axis; the bound only guards against a bug.
    const int max_turns = 4 * mesh_.axis_count() + 4;
    for (int turn = 0; !(current_ == target_); ++turn) {
      if (turn > max_turns) throw std::logic_error("redistribute: no progress (a bug)");
      if (!(try_local() || try_reduce_scatter() || try_all_to_all() || try_all_reduce() || try_all_gather())) {
        throw std::logic_error(fmt::format("redistribute: stuck at {} going to {} (a bug)", to_string(current_, mesh_),
                                           to_string(target_, mesh_)));
      }
    }
    return std::move(steps_);
  }

 private:
  int64_t local_bytes(const TensorLayout& layout) const {
    return local_element_count(layout, mesh_, shape_) * element_bytes_;
  }

  Collective make(CollectiveKind kind, Axes axes) const {
    Collective c;
    c.kind = kind;
    c.group_size = mesh_.group_size(axes);
    c.axes = std::move(axes);
    c.element_bytes = element_bytes_;
    return c;
  }

  void emit(std::optional<Collective> collective, TensorLayout after) {
    steps_.push_back({std::move(collective), current_, after});
    current_ = std::move(after);
  }

  std::size_t dims() const { return current_.dim_axes.size(); }

  // Rule 1: replicated axes that come next in a target dim are sliced; replicated axes the
  // target holds partial become partial.
  bool try_local() {
    TensorLayout next = current_;
    bool changed = false;
    for (std::size_t d = 0; d < dims(); ++d) {
      Axes& have = next.dim_axes[d];
      const Axes& want = target_.dim_axes[d];
      while (is_prefix(have, want) && have.size() < want.size() &&
             axis_use(next, want[have.size()]).role == AxisUse::Role::replicated) {
        have.push_back(want[have.size()]);
        changed = true;
      }
    }
    for (int axis : target_.partial_axes) {
      if (axis_use(next, axis).role == AxisUse::Role::replicated) {
        next.partial_axes.push_back(axis);
        changed = true;
      }
    }
    if (changed) emit(std::nullopt, std::move(next));
    return changed;
  }

  // Rule 2: the longest run of partial axes that comes next in a target dim.
  bool try_reduce_scatter() {
    for (std::size_t d = 0; d < dims(); ++d) {
      const Axes& have = current_.dim_axes[d];
      const Axes& want = target_.dim_axes[d];
      if (!is_prefix(have, want)) continue;
      Axes run;
      for (std::size_t p = have.size(); p < want.size(); ++p) {
        if (!contains(current_.partial_axes, want[p])) break;
        run.push_back(want[p]);
      }
      if (run.empty()) continue;
      Collective c = make(CollectiveKind::reduce_scatter, run);
      c.dim = static_cast<int>(d);
      c.buffer_bytes = local_bytes(current_);
      TensorLayout next = current_;
      for (int axis : run) {
        next.dim_axes[d].push_back(axis);
        std::erase(next.partial_axes, axis);
      }
      emit(std::move(c), std::move(next));
      return true;
    }
    return false;
  }

  // Rule 3: a trailing run of misplaced axes of dim d that comes next, in the same order, in a
  // dim e whose current axes are a prefix of its target. The longest such run goes as one
  // collective (moving its axes one at a time would reverse their order).
  bool try_all_to_all() {
    for (std::size_t d = 0; d < dims(); ++d) {
      const Axes& have = current_.dim_axes[d];
      const std::size_t keep = common_prefix(have, target_.dim_axes[d]);
      for (std::size_t start = keep; start < have.size(); ++start) {
        const Axes run(have.begin() + static_cast<std::ptrdiff_t>(start), have.end());
        for (std::size_t e = 0; e < dims(); ++e) {
          if (e == d) continue;
          const Axes& have_e = current_.dim_axes[e];
          const Axes& want_e = target_.dim_axes[e];
          if (!is_prefix(have_e, want_e) || want_e.size() < have_e.size() + run.size()) continue;
          if (!std::equal(run.begin(), run.end(), want_e.begin() + static_cast<std::ptrdiff_t>(have_e.size()))) {
            continue;
          }
          Collective c = make(CollectiveKind::all_to_all, run);
          c.dim = static_cast<int>(d);
          c.other_dim = static_cast<int>(e);
          c.buffer_bytes = local_bytes(current_);
          TensorLayout next = current_;
          next.dim_axes[d].resize(start);
          next.dim_axes[e].insert(next.dim_axes[e].end(), run.begin(), run.end());
          emit(std::move(c), std::move(next));
          return true;
        }
      }
    }
    return false;
  }

  // Rule 4: every partial axis the target does not keep, in one all_reduce (one ring over the
  // combined group sends less than one ring per axis).
  bool try_all_reduce() {
    Axes axes;
    for (int axis = 0; axis < mesh_.axis_count(); ++axis) {
      if (contains(current_.partial_axes, axis) && !contains(target_.partial_axes, axis)) {
        axes.push_back(axis);
      }
    }
    if (axes.empty()) return false;
    Collective c = make(CollectiveKind::all_reduce, axes);
    c.buffer_bytes = local_bytes(current_);
    TensorLayout next = current_;
    for (int axis : axes) std::erase(next.partial_axes, axis);
    emit(std::move(c), std::move(next));
    return true;
  }

  // Rule 5: gather the innermost axis of a dim that is not a prefix of its target; the smallest
  // axis first, since a gather multiplies the array by the group size.
  bool try_all_gather() {
    int best_dim = -1;
    int best_size = 0;
    for (std::size_t d = 0; d < dims(); ++d) {
      const Axes& have = current_.dim_axes[d];
      if (is_prefix(have, target_.dim_axes[d])) continue;
      const int size = mesh_.axis(have.back()).size;
      if (best_dim < 0 || size < best_size) {
        best_dim = static_cast<int>(d);
        best_size = size;
      }
    }
    if (best_dim < 0) return false;
    const auto d = static_cast<std::size_t>(best_dim);
    TensorLayout next = current_;
    const int axis = next.dim_axes[d].back();
    next.dim_axes[d].pop_back();
    Collective c = make(CollectiveKind::all_gather, {axis});
    c.dim = best_dim;
    c.buffer_bytes = local_bytes(next);  // the gathered output
    emit(std::move(c), std::move(next));
    return true;
  }

  TensorLayout current_;
  const TensorLayout& target_;
  const Mesh& mesh_;
  std::span<const int64_t> shape_;
  int64_t element_bytes_;
  std::vector<RedistributionStep> steps_;
};

// Clean-up passes: a collective over a group of one rank moves nothing, so it becomes a local
// step; adjacent gathers of the same dim become one gather over the joined axes (same bytes,
// fewer latency steps); adjacent local steps merge.
std::vector<RedistributionStep> tidy(std::vector<RedistributionStep> steps) {
  for (auto& step : steps) {
    if (step.collective && step.collective->group_size == 1) step.collective.reset();
  }
  std::vector<RedistributionStep> out;
  for (auto& step : steps) {
    if (!out.empty()) {
      RedistributionStep& last = out.back();
      const bool both_local = !last.collective && !step.collective;
      const bool both_gather_same_dim =
          last.collective && step.collective && last.collective->kind == CollectiveKind::all_gather &&
          step.collective->kind == CollectiveKind::all_gather && last.collective->dim == step.collective->dim;
      if (both_gather_same_dim) {
        // The second gather's axis sat just outside the first's, so the joined group (second's
        // axes, then first's) lists the blocks in order.
        Collective merged = *step.collective;
        merged.axes.insert(merged.axes.end(), last.collective->axes.begin(), last.collective->axes.end());
        merged.group_size *= last.collective->group_size;
        last.collective = std::move(merged);
        last.after = std::move(step.after);
        continue;
      }
      if (both_local) {
        last.after = std::move(step.after);
        continue;
      }
    }
    out.push_back(std::move(step));
  }
  return out;
}

}  // namespace

std::vector<RedistributionStep> plan_redistribution(const TensorLayout& from, const TensorLayout& to, const Mesh& mesh,
                                                    std::span<const int64_t> global_shape, int64_t element_bytes) {
  validate_named(from, mesh, global_shape, "from");
  validate_named(to, mesh, global_shape, "to");
  if (element_bytes < 1) {
    throw PlanError(fmt::format("redistribute: element_bytes must be >= 1, got {}", element_bytes));
  }
  return tidy(Planner(from, to, mesh, global_shape, element_bytes).run());
}

std::vector<Collective> redistribute(const TensorLayout& from, const TensorLayout& to, const Mesh& mesh,
                                     std::span<const int64_t> global_shape, int64_t element_bytes) {
  std::vector<Collective> collectives;
  for (auto& step : plan_redistribution(from, to, mesh, global_shape, element_bytes)) {
    if (step.collective) collectives.push_back(std::move(*step.collective));
  }
  return collectives;
}

bool is_local_transition(const TensorLayout& before, const TensorLayout& after, const Mesh& mesh,
                         std::span<const int64_t> global_shape) {
  for (int axis : before.partial_axes) {
    if (mesh.axis(axis).size > 1 && !contains(after.partial_axes, axis)) return false;
  }
  const std::vector<int64_t> shape_b = local_shape(before, mesh, global_shape);
  const std::vector<int64_t> shape_a = local_shape(after, mesh, global_shape);
  for (int rank = 0; rank < mesh.rank_count(); ++rank) {
    const std::vector<int64_t> off_b = local_offset(before, mesh, global_shape, rank);
    const std::vector<int64_t> off_a = local_offset(after, mesh, global_shape, rank);
    for (std::size_t d = 0; d < shape_a.size(); ++d) {
      if (off_a[d] < off_b[d] || off_a[d] + shape_a[d] > off_b[d] + shape_b[d]) return false;
    }
  }
  return true;
}

LocalReslice local_reslice(const TensorLayout& before, const TensorLayout& after, const Mesh& mesh,
                           std::span<const int64_t> global_shape, int rank) {
  // Checks this rank only (is_local_transition checks them all), so an executor calling this on
  // every rank does O(1) work each.
  for (int axis : before.partial_axes) {
    if (mesh.axis(axis).size > 1 && !contains(after.partial_axes, axis)) {
      throw std::logic_error(fmt::format("local_reslice: {} -> {} reduces partial axis '{}'", to_string(before, mesh),
                                         to_string(after, mesh), mesh.axis(axis).name));
    }
  }
  const std::vector<int64_t> base_shape = local_shape(before, mesh, global_shape);
  const std::vector<int64_t> base = local_offset(before, mesh, global_shape, rank);
  LocalReslice r;
  r.shape = local_shape(after, mesh, global_shape);
  r.offset = local_offset(after, mesh, global_shape, rank);
  for (std::size_t d = 0; d < r.offset.size(); ++d) {
    r.offset[d] -= base[d];
    if (r.offset[d] < 0 || r.offset[d] + r.shape[d] > base_shape[d]) {
      throw std::logic_error(fmt::format("local_reslice: {} -> {} needs data rank {} lacks (dim {})",
                                         to_string(before, mesh), to_string(after, mesh), rank, d));
    }
  }
  for (int axis : after.partial_axes) {
    if (!contains(before.partial_axes, axis) && mesh.coordinate(rank, axis) != 0) r.zero = true;
  }
  return r;
}

}  // namespace splitbrain::plans
