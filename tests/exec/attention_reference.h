#pragma once
// Self-attention in float64 loops, written from the definitions rather than from the kernels'
// helpers: the fused group-major input (per position, per group: its query heads, its k, its
// v), a group's k and v shared by its query heads, q and k rotated by Hugging Face Llama's
// rotate-half, the causal mask, and backward by the chain rule. The CPU kernel's tests, with and
// without fused, compare against it.

#include <cstdint>
#include <string>
#include <vector>

#include "exec/kernels/attention.h"

namespace splitbrain::exec::cpu::testing {

struct Reference {
  std::vector<double> y, probs, dx;
  std::vector<double> log_sum_exp;  // of every scaled, masked score row, [N, heads, T]
};

Reference reference_attention(const kernels::AttentionShape& s, const std::vector<double>& x,
                              const std::vector<double>& dy);

std::vector<double> widened(const std::vector<float>& v);
// Floats of the fused input of `s`.
int64_t fused_elements(const kernels::AttentionShape& s);
std::string name_of(const kernels::AttentionShape& s);

}  // namespace splitbrain::exec::cpu::testing
