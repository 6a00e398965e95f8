#pragma once
// How close a device gets to its peak rate as a function of the size of the work.
//
// Small kernels do not fill the machine: launch overhead, tail effects and cache warm-up cost
// a roughly fixed time per kernel. A fixed overhead t0 on top of work W done at rate R gives an
// achieved rate R * W / (W + R*t0), i.e. a saturating curve
//     efficiency(size) = max_efficiency * size / (size + half_efficiency_size)
// that is 0 at size 0, max_efficiency/2 at half_efficiency_size, and tends to max_efficiency.
// It is monotone non-decreasing in size and never exceeds max_efficiency <= 1, so the achieved
// rate never exceeds the peak. `splitbrain calibrate` fits both parameters from measurements.

#include <optional>
#include <string_view>

namespace splitbrain::sim {

// Classes of operators that share one efficiency curve.
enum class OpClass {
  gemm,         // matrix multiplies (fully connected layers, attention projections)
  conv,         // convolutions (direct, implicit-GEMM or Winograd inside the library)
  elementwise,  // memory-bound ops: activations, normalisation, pooling, optimizer updates
};

// Forward and backward kernels of one class can run at different rates (a backward convolution
// computes two products of other shapes; the weight gradient reduces over the batch and the
// image, which small images do badly).
enum class KernelPass { forward, backward, weight_gradient };

std::string_view op_class_name(OpClass op_class);  // "gemm", "conv", "elementwise"
std::optional<OpClass> op_class_from_name(std::string_view name);

struct EfficiencyCurve {
  double max_efficiency = 1.0;        // the asymptote, in (0, 1]
  double half_efficiency_size = 0.0;  // size (FLOPs or bytes) at which half the asymptote is reached, >= 0

  // Fraction of peak achieved for work of `size` (FLOPs or bytes); 0 for size <= 0.
  double efficiency(double size) const;

  bool operator==(const EfficiencyCurve&) const = default;
};

}  // namespace splitbrain::sim
