#include "plans/transfers.h"

#include <fmt/format.h>

#include <utility>

#include "plans/plan_error.h"

namespace splitbrain::plans {

Collective halo_exchange(const TensorLayout& layout, const Mesh& mesh, std::span<const int64_t> global_shape,
                         int64_t element_bytes, int dim, int64_t halo_rows) {
  validate(layout, mesh, global_shape);
  if (dim < 0 || static_cast<std::size_t>(dim) >= global_shape.size()) {
    throw PlanError(fmt::format("halo_exchange: dim {} out of range for a {}-dim tensor", dim, global_shape.size()));
  }
  if (element_bytes < 1) {
    throw PlanError(fmt::format("halo_exchange: element_bytes must be >= 1, got {}", element_bytes));
  }
  const std::vector<int64_t> shape = local_shape(layout, mesh, global_shape);
  const auto d = static_cast<std::size_t>(dim);
  Collective c;
  c.kind = CollectiveKind::halo_exchange;
  c.axes = layout.dim_axes[d];
  c.group_size = mesh.group_size(c.axes);
  if (halo_rows < 0 || (c.group_size > 1 && halo_rows > shape[d])) {
    throw PlanError(
        fmt::format("halo_exchange: halo_rows {} must be in [0, {}] (the local rows "
                    "of dim {})",
                    halo_rows, shape[d], dim));
  }
  c.dim = dim;
  c.halo_rows = halo_rows;
  c.element_bytes = element_bytes;
  c.row_bytes = element_bytes;
  for (std::size_t k = 0; k < shape.size(); ++k) {
    if (k != d) c.row_bytes *= shape[k];
  }
  c.buffer_bytes = c.row_bytes * shape[d];
  return c;
}

Collective pipeline_send(const Mesh& mesh, int pipe_axis, int source_stage, int destination_stage,
                         int64_t shard_bytes) {
  if (pipe_axis < 0 || pipe_axis >= mesh.axis_count()) {
    throw PlanError(fmt::format("pipeline_send: pipe_axis {} is not an axis of mesh {}", pipe_axis, mesh.to_string()));
  }
  const MeshAxis& axis = mesh.axis(pipe_axis);
  for (auto [field, stage] :
       {std::pair{"source_stage", source_stage}, std::pair{"destination_stage", destination_stage}}) {
    if (stage < 0 || stage >= axis.size) {
      throw PlanError(fmt::format("pipeline_send: {} {} out of range for axis '{}' of size {}", field, stage, axis.name,
                                  axis.size));
    }
  }
  if (source_stage == destination_stage) {
    throw PlanError(fmt::format("pipeline_send: source_stage and destination_stage are both {}", source_stage));
  }
  if (shard_bytes < 0) {
    throw PlanError(fmt::format("pipeline_send: shard_bytes must be >= 0, got {}", shard_bytes));
  }
  Collective c;
  c.kind = CollectiveKind::send_recv;
  c.axes = {pipe_axis};
  c.group_size = axis.size;
  c.source_index = source_stage;
  c.destination_index = destination_stage;
  c.buffer_bytes = shard_bytes;
  return c;
}

Collective pipeline_send(const Mesh& mesh, int pipe_axis, int source_stage, int destination_stage,
                         const TensorLayout& layout, std::span<const int64_t> global_shape, int64_t element_bytes) {
  validate(layout, mesh, global_shape);
  if (axis_use(layout, pipe_axis).role != AxisUse::Role::replicated) {
    throw PlanError(fmt::format("pipeline_send: the layout {} uses the pipe axis '{}'", to_string(layout, mesh),
                                mesh.axis(pipe_axis).name));
  }
  if (element_bytes < 1) {
    throw PlanError(fmt::format("pipeline_send: element_bytes must be >= 1, got {}", element_bytes));
  }
  Collective c = pipeline_send(mesh, pipe_axis, source_stage, destination_stage,
                               local_element_count(layout, mesh, global_shape) * element_bytes);
  c.element_bytes = element_bytes;
  return c;
}

}  // namespace splitbrain::plans
