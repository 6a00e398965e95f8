#include "exec/runtime/collectives_in_device_memory.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <memory>
#include <stdexcept>
#include <vector>

#include "plans/collective_residence.h"

namespace splitbrain::exec {
namespace {

using plans::CollectiveKind;

// An array of `shape` seen along `dim`: planes (the dimensions before it) of rows (its extent) of
// row_elements (the dimensions after it).
struct Planes {
  int64_t planes = 1;
  int64_t rows = 1;
  int64_t row_elements = 1;
};

Planes planes_along(std::span<const int64_t> shape, int dim) {
  if (dim < 0 || static_cast<size_t>(dim) >= shape.size()) {
    throw std::logic_error(fmt::format("step program: a collective along dim {} of a {}-d array", dim, shape.size()));
  }
  Planes v;
  for (size_t k = 0; k < shape.size(); ++k) {
    if (k < static_cast<size_t>(dim)) v.planes *= shape[k];
    if (k > static_cast<size_t>(dim)) v.row_elements *= shape[k];
  }
  v.rows = shape[static_cast<size_t>(dim)];
  return v;
}

// The j-th of n blocks along the dimension `whole` is seen along, for each member j, laid one after
// another into `flat` (member 0's first): the send buffer of a scatter or an exchange.
void cut_pieces(MemoryAndCollectives device, const DeviceArray& whole, const Planes& v, int n, DeviceArray& flat) {
  const int64_t rows = v.rows / n;
  const int64_t piece = v.planes * rows * v.row_elements;
  for (int j = 0; j < n; ++j) {
    device.memory.copy_rows(whole, 0, flat, j * piece,
                            {.planes = v.planes,
                             .row_elements = v.row_elements,
                             .rows = rows,
                             .from_plane_rows = v.rows,
                             .from_first_row = j * rows,
                             .into_plane_rows = rows,
                             .into_first_row = 0});
  }
}

// The inverse: member j's piece of `flat` becomes the j-th block along the dimension `whole` is
// seen along (what a gather or an exchange received).
void place_pieces(MemoryAndCollectives device, const DeviceArray& flat, const Planes& v, int n, DeviceArray& whole) {
  const int64_t rows = v.rows / n;
  const int64_t piece = v.planes * rows * v.row_elements;
  for (int j = 0; j < n; ++j) {
    device.memory.copy_rows(flat, j * piece, whole, 0,
                            {.planes = v.planes,
                             .row_elements = v.row_elements,
                             .rows = rows,
                             .from_plane_rows = rows,
                             .from_first_row = 0,
                             .into_plane_rows = v.rows,
                             .into_first_row = j * rows});
  }
}

// The local shape after `c` on a member's array of `shape` (Communicator checked the divisions).
std::vector<int64_t> result_shape(const plans::Collective& c, int n, std::vector<int64_t> shape) {
  switch (c.kind) {
    case CollectiveKind::all_gather:
      shape[static_cast<size_t>(c.dim)] *= n;
      break;
    case CollectiveKind::reduce_scatter:
      shape[static_cast<size_t>(c.dim)] /= n;
      break;
    case CollectiveKind::all_to_all:
      shape[static_cast<size_t>(c.dim)] *= n;
      shape[static_cast<size_t>(c.other_dim)] /= n;
      break;
    default:
      break;
  }
  return shape;
}

void check_elements(const DeviceArray& array, std::span<const int64_t> shape, const char* what) {
  if (array.elements() != shape_elements(shape)) {
    throw std::logic_error(fmt::format("step program: {} of {} elements where its shape [{}] has {}", what,
                                       array.elements(), fmt::join(shape, ", "), shape_elements(shape)));
  }
}

// One collective from `input` (of `shape`) into `output` (of its result's shape).
void run_one(MemoryAndCollectives device, comm::CollectiveEngine& engine, const plans::Collective& c,
             std::span<const int64_t> shape, const DeviceArray& input, DeviceArray& output) {
  const int n = engine.group_size(c.axes);
  if (n == 1) {  // the group's sum, gather, piece or exchange is the input itself
    if (&input != &output) device.memory.copy(input, 0, output, 0, output.elements());
    return;
  }
  switch (c.kind) {
    case CollectiveKind::all_reduce:
      if (&input != &output) device.memory.copy(input, 0, output, 0, output.elements());
      device.collectives.start_all_reduce(engine, c.axes, output)->wait();
      return;
    case CollectiveKind::all_gather: {
      Planes gathered = planes_along(shape, c.dim);
      gathered.rows *= n;
      if (gathered.planes == 1) {  // the members' arrays one after another are the concatenation
        device.collectives.all_gather(engine, c.axes, input, output);
        return;
      }
      const std::unique_ptr<DeviceArray> flat = device.memory.allocate({output.elements()}, false);
      device.collectives.all_gather(engine, c.axes, input, *flat);
      place_pieces(device, *flat, gathered, n, output);
      return;
    }
    case CollectiveKind::reduce_scatter: {
      const Planes whole = planes_along(shape, c.dim);
      if (whole.planes == 1) {
        device.collectives.start_reduce_scatter(engine, c.axes, input, output)->wait();
        return;
      }
      const std::unique_ptr<DeviceArray> flat = device.memory.allocate({input.elements()}, false);
      cut_pieces(device, input, whole, n, *flat);
      device.collectives.start_reduce_scatter(engine, c.axes, *flat, output)->wait();
      return;
    }
    case CollectiveKind::all_to_all: {
      const Planes sent = planes_along(shape, c.other_dim);
      std::unique_ptr<DeviceArray> send_flat;
      if (sent.planes != 1) {
        send_flat = device.memory.allocate({input.elements()}, false);
        cut_pieces(device, input, sent, n, *send_flat);
      }
      const DeviceArray& send = send_flat ? *send_flat : input;
      const Planes received = planes_along(result_shape(c, n, {shape.begin(), shape.end()}), c.dim);
      if (received.planes == 1) {
        device.collectives.all_to_all(engine, c.axes, send, output);
        return;
      }
      const std::unique_ptr<DeviceArray> flat = device.memory.allocate({output.elements()}, false);
      device.collectives.all_to_all(engine, c.axes, send, *flat);
      place_pieces(device, *flat, received, n, output);
      return;
    }
    default:
      throw std::logic_error(
          fmt::format("step program: a {} does not run in device memory", plans::collective_name(c.kind)));
  }
}

// A redistribution's local step: this rank's `after` block cut out of its `before` block (one row
// copy per dimension that shrinks), or zeros where the rank is off coordinate 0 of an axis that
// became partial (the group's sum stays the value).
void reslice(MemoryAndCollectives device, const plans::LocalReslice& r, std::vector<int64_t> shape,
             const DeviceArray& from, DeviceArray& into) {
  if (r.zero) {
    device.memory.fill(into, 0, into.elements(), 0.0f);
    return;
  }
  std::vector<size_t> cut;
  for (size_t k = 0; k < shape.size(); ++k) {
    if (r.shape[k] != shape[k]) cut.push_back(k);
  }
  if (cut.empty()) {
    device.memory.copy(from, 0, into, 0, into.elements());
    return;
  }
  const DeviceArray* current = &from;
  std::unique_ptr<DeviceArray> held;
  for (size_t i = 0; i < cut.size(); ++i) {
    const size_t k = cut[i];
    const Planes v = planes_along(shape, static_cast<int>(k));
    shape[k] = r.shape[k];
    std::unique_ptr<DeviceArray> next = i + 1 < cut.size() ? device.memory.allocate(shape, false) : nullptr;
    DeviceArray& target = next ? *next : into;
    device.memory.copy_rows(*current, 0, target, 0,
                            {.planes = v.planes,
                             .row_elements = v.row_elements,
                             .rows = r.shape[k],
                             .from_plane_rows = v.rows,
                             .from_first_row = r.offset[k],
                             .into_plane_rows = r.shape[k],
                             .into_first_row = 0});
    held = std::move(next);
    current = held.get();
  }
}

}  // namespace

void run_collectives_in_device_memory(MemoryAndCollectives device, comm::Communicator& communicator,
                                      std::span<const plans::Collective> collectives, const DeviceArray& input,
                                      DeviceArray& output, std::string_view label) {
  if (collectives.empty()) throw std::logic_error("step program: a collective instruction without collectives");
  std::vector<int64_t> shape = input.shape();
  const DeviceArray* current = &input;
  std::unique_ptr<DeviceArray> held;
  for (size_t i = 0; i < collectives.size(); ++i) {
    const plans::Collective& c = collectives[i];
    if (!plans::runs_on_device_memory(c)) {
      throw std::logic_error(
          fmt::format("step program: a {} does not run in device memory", plans::collective_name(c.kind)));
    }
    communicator.check_fp32(c, shape);
    const std::vector<int64_t> before = shape;
    shape = result_shape(c, communicator.mesh().group_size(c.axes), std::move(shape));
    std::unique_ptr<DeviceArray> next = i + 1 < collectives.size() ? device.memory.allocate(shape, false) : nullptr;
    DeviceArray& target = next ? *next : output;
    check_elements(target, shape, "a collective's result");
    run_one(device, communicator.engine(), c, before, *current, target);
    communicator.count(label, c);
    held = std::move(next);
    current = held.get();
  }
}

void redistribute_in_device_memory(MemoryAndCollectives device, comm::Communicator& communicator,
                                   std::span<const plans::RedistributionStep> steps,
                                   std::span<const int64_t> global_shape, const DeviceArray& input, DeviceArray& output,
                                   std::string_view label) {
  if (steps.empty()) {
    check_elements(output, input.shape(), "a redistribution without steps delivers into an array");
    device.memory.copy(input, 0, output, 0, output.elements());
    return;
  }
  const plans::Mesh& mesh = communicator.mesh();
  const DeviceArray* current = &input;
  std::unique_ptr<DeviceArray> held;
  for (size_t i = 0; i < steps.size(); ++i) {
    const plans::RedistributionStep& step = steps[i];
    const std::vector<int64_t> before = plans::local_shape(step.before, mesh, global_shape);
    const std::vector<int64_t> after = plans::local_shape(step.after, mesh, global_shape);
    check_elements(*current, before, "a redistribution step's input");
    std::unique_ptr<DeviceArray> next = i + 1 < steps.size() ? device.memory.allocate(after, false) : nullptr;
    DeviceArray& target = next ? *next : output;
    check_elements(target, after, "a redistribution step's result");
    if (step.collective) {
      communicator.check_fp32(*step.collective, before);
      run_one(device, communicator.engine(), *step.collective, before, *current, target);
      communicator.count(label, *step.collective);
    } else {
      reslice(device, plans::local_reslice(step.before, step.after, mesh, global_shape, communicator.rank()), before,
              *current, target);
    }
    held = std::move(next);
    current = held.get();
  }
}

}  // namespace splitbrain::exec
