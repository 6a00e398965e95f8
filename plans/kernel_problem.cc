#include "plans/kernel_problem.h"

#include "plans/op_rules.h"
#include "plans/tensor_layout.h"

namespace splitbrain::plans {
namespace {

int64_t conv_out_extent(int64_t in, int64_t pad_lo, int64_t pad_hi, int64_t kernel, int64_t stride, int64_t dilation) {
  const int64_t span = dilation * (kernel - 1) + 1;
  const int64_t padded = in + pad_lo + pad_hi;
  return padded < span ? 0 : (padded - span) / stride + 1;
}

// PyTorch's window count: floor or ceil of (padded - kernel) / stride, plus one; with ceil the
// last window must still start inside the input or the leading padding.
int64_t pool_out_extent(int64_t in, int64_t pad_lo, int64_t pad_hi, int64_t kernel, int64_t stride, bool ceil_mode) {
  const int64_t room = in + pad_lo + pad_hi - kernel;
  if (room < 0) return 0;
  int64_t out = (ceil_mode ? (room + stride - 1) / stride : room / stride) + 1;
  if (ceil_mode && (out - 1) * stride >= in + pad_lo) --out;
  return out;
}

// The field that holds a problem's work items (work_items).
int64_t& work_field(ConvProblem& p) { return p.batch; }
int64_t& work_field(PoolProblem& p) { return p.batch; }
int64_t& work_field(ActivationProblem& p) { return p.elements; }
int64_t& work_field(LinearProblem& p) { return p.rows; }
int64_t& work_field(AttentionProblem& p) { return p.batch; }
int64_t& work_field(LayerNormProblem& p) { return p.rows; }
int64_t& work_field(LossProblem& p) { return p.rows; }

}  // namespace

int64_t ConvProblem::out_height() const {
  return conv_out_extent(height, pad_top, pad_bottom, kernel_h, stride_h, dilation_h);
}
int64_t ConvProblem::out_width() const {
  return conv_out_extent(width, pad_left, pad_right, kernel_w, stride_w, dilation_w);
}

int64_t PoolProblem::out_height() const {
  return pool_out_extent(height, pad_top, pad_bottom, kernel_h, stride_h, ceil_mode);
}
int64_t PoolProblem::out_width() const {
  return pool_out_extent(width, pad_left, pad_right, kernel_w, stride_w, ceil_mode);
}

std::optional<KernelProblem> kernel_problem(const model::Model& model, int index, const LayerLayouts& layouts,
                                            const Mesh& mesh, int64_t micro_batch) {
  const model::Layer& layer = model.layer(index);
  const OpRules& rules = op_rules(layer.kind);
  if (rules.kernel_problem == nullptr) return std::nullopt;
  if (layouts.inputs.empty() || micro_batch <= 0 || layouts.work_fraction <= 0.0) return std::nullopt;
  const model::Layer& producer = model.layer(layer.inputs.at(0));
  const KernelProblemRequest request{layer, layouts, mesh, micro_batch,
                                     local_shape(layouts.inputs[0], mesh, activation_shape(producer, micro_batch))};
  return rules.kernel_problem(request);
}

int64_t work_items(const KernelProblem& problem) {
  return std::visit([](auto p) { return work_field(p); }, problem);
}

KernelProblem with_work_items(const KernelProblem& problem, int64_t items) {
  return std::visit(
      [items](auto p) -> KernelProblem {
        work_field(p) = items;
        return p;
      },
      problem);
}

}  // namespace splitbrain::plans
