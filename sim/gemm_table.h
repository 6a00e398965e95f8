#pragma once
// Efficiency of a device's matrix products by shape, measured on a small grid and interpolated.
//
// A FLOP-sized curve (sim/efficiency.h) cannot tell a skinny product from a square one of the
// same FLOPs: a linear layer on one sample's row (a pipeline's micro-batch of 1) or a tensor-
// parallel slice of a projection streams its whole weight for little arithmetic and runs far
// below a square product. The table holds the fraction of peak that the device's own linear
// kernel reached at each (m, n, k) of a grid, per pass, and reads other shapes in between.
//
// Shapes are a linear layer's forward product Y[m, n] = X[m, k] W^T: m rows (samples x tokens of
// the local micro-batch), k input features, n output features. The backward passes are keyed by
// the same forward shape (their products are the transposes: dX[m, k] = dY[m, n] W and
// dW[n, k] = dY^T X), each with its own measured efficiency.

#include <array>
#include <cstdint>
#include <string_view>
#include <vector>

#include "sim/efficiency.h"

namespace splitbrain::sim {

struct GemmShape {
  double m = 0;  // rows
  double n = 0;  // output features
  double k = 0;  // input features (the reduction)
};

struct GemmEfficiencyTable {
  // The grid, each axis ascending, positive and distinct (validate_cluster checks every rule).
  std::vector<int64_t> m;
  std::vector<int64_t> n;
  std::vector<int64_t> k;
  // Fraction of peak in (0, 1] per pass (forward, backward = input gradient, weight_gradient),
  // at grid point (i, j, l) at index (i * n.size() + j) * k.size() + l.
  std::array<std::vector<double>, 3> efficiency;

  size_t index(size_t i, size_t j, size_t l) const { return (i * n.size() + j) * k.size() + l; }
  std::vector<double>& of(KernelPass pass) { return efficiency[static_cast<size_t>(pass)]; }
  const std::vector<double>& of(KernelPass pass) const { return efficiency[static_cast<size_t>(pass)]; }

  bool operator==(const GemmEfficiencyTable&) const = default;
};

// The JSON key of each pass's values: "forward", "backward_input", "weight_gradient".
std::string_view gemm_pass_key(KernelPass pass);

// Fraction of peak for a product of `shape` in `pass`: trilinear in log(m), log(n), log(k)
// between the grid's neighbours, clamped to the grid's edges outside it. Exact at grid points;
// monotone along an axis wherever the table is. The table must follow validate_cluster's rules.
double gemm_table_efficiency(const GemmEfficiencyTable& table, KernelPass pass, const GemmShape& shape);

}  // namespace splitbrain::sim
