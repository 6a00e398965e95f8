#include "exec/kernels/shape_checks.h"

#include <algorithm>
#include <string>

#include "exec/kernels/kernel_argument_error.h"

namespace splitbrain::exec::kernels {

namespace {

void require(bool ok, const char* kernel, const std::string& what) {
  if (!ok) throw KernelArgumentError(std::string(kernel) + ": " + what);
}

// The rows (or columns) of padded input a pooling's windows reach: the leading padding and the
// input, and as far as the last window reaches (ceil_mode's, or one into the trailing padding).
int64_t covered_extent(int64_t in, int64_t pad_lo, int64_t out, int64_t kernel, int64_t stride) {
  return std::max(pad_lo + in, (out - 1) * stride + kernel);
}

}  // namespace

const Conv2dShape& checked(const Conv2dShape& s) {
  const char* kernel = "Conv2dKernel";
  require(s.batch > 0 && s.in_channels > 0 && s.height > 0 && s.width > 0, kernel, "input dims must be positive");
  require(s.out_channels > 0 && s.kernel_h > 0 && s.kernel_w > 0, kernel, "out_channels and kernel must be positive");
  require(s.stride_h > 0 && s.stride_w > 0 && s.dilation_h > 0 && s.dilation_w > 0, kernel,
          "stride and dilation must be positive");
  require(s.pad_top >= 0 && s.pad_bottom >= 0 && s.pad_left >= 0 && s.pad_right >= 0, kernel, "padding must be >= 0");
  require(s.groups > 0 && s.in_channels % s.groups == 0 && s.out_channels % s.groups == 0, kernel,
          "groups (" + std::to_string(s.groups) + ") must divide in_channels and out_channels");
  require(s.out_height() > 0 && s.out_width() > 0, kernel, "the kernel does not fit the padded input");
  return s;
}

const Pool2dShape& checked(PoolKind kind, const Pool2dShape& s) {
  const char* kernel = "Pool2dKernel";
  require(s.batch > 0 && s.channels > 0 && s.height > 0 && s.width > 0, kernel, "input dims must be positive");
  require(s.kernel_h > 0 && s.kernel_w > 0 && s.stride_h > 0 && s.stride_w > 0, kernel,
          "kernel and stride must be positive");
  require(s.pad_top >= 0 && s.pad_bottom >= 0 && s.pad_left >= 0 && s.pad_right >= 0, kernel, "padding must be >= 0");
  require(s.out_height() > 0 && s.out_width() > 0, kernel, "the window does not fit the padded input");
  // A window that reaches past the padding is averaged over a count the libraries disagree on:
  // PyTorch clips the window to the padded input, oneDNN's include-padding average does not.
  if (kind == PoolKind::average) {
    require(covered_extent(s.height, s.pad_top, s.out_height(), s.kernel_h, s.stride_h) <=
                    s.pad_top + s.height + s.pad_bottom &&
                covered_extent(s.width, s.pad_left, s.out_width(), s.kernel_w, s.stride_w) <=
                    s.pad_left + s.width + s.pad_right,
            kernel, "average pooling with ceil_mode whose last window overhangs the padding is not supported");
  }
  return s;
}

const AdaptiveAvgPoolShape& checked(const AdaptiveAvgPoolShape& s) {
  require(s.batch > 0 && s.channels > 0 && s.height > 0 && s.width > 0 && s.out_height > 0 && s.out_width > 0,
          "adaptive_avgpool", "every dim must be positive");
  return s;
}

const LinearShape& checked(const LinearShape& s) {
  require(s.rows > 0 && s.in_features > 0 && s.out_features > 0, "LinearKernel",
          "rows, in_features and out_features must be positive");
  return s;
}

const BatchedMatmulShape& checked(const BatchedMatmulShape& s) {
  require(s.batch > 0 && s.m > 0 && s.k > 0 && s.n > 0, "BatchedMatmulKernel", "batch, m, k and n must be positive");
  return s;
}

const BatchNormShape& checked(const BatchNormShape& s) {
  require(s.batch > 0 && s.channels > 0 && s.spatial > 0, "batchnorm", "batch, channels and spatial must be positive");
  return s;
}

const LayerNormShape& checked(const LayerNormShape& s) {
  require(s.rows > 0 && s.features > 0 && s.epsilon >= 0, "LayerNormKernel",
          "rows and features must be positive, epsilon >= 0");
  return s;
}

const EmbeddingShape& checked(const EmbeddingShape& s) {
  require(s.count >= 0 && s.dim > 0 && s.num_embeddings > 0, "embedding",
          "count >= 0, dim and num_embeddings > 0 required");
  require(s.row_begin >= 0 && s.row_begin <= s.row_end && s.row_end <= s.num_embeddings, "embedding",
          "rows [" + std::to_string(s.row_begin) + ", " + std::to_string(s.row_end) + ") are not inside the table of " +
              std::to_string(s.num_embeddings));
  return s;
}

const SoftmaxCrossEntropyShape& checked(const SoftmaxCrossEntropyShape& s) {
  require(s.rows > 0 && s.classes > 0, "softmax_cross_entropy", "rows and classes must be positive");
  return s;
}

const AttentionShape& checked(const AttentionShape& s) {
  require(s.batch > 0 && s.seq > 0 && s.heads > 0 && s.head_dim > 0, "SelfAttentionKernel",
          "batch, seq, heads and head_dim must be positive");
  require(s.kv_heads >= 0 && (s.kv_heads == 0 || s.heads % s.kv_heads == 0), "SelfAttentionKernel",
          "kv_heads " + std::to_string(s.kv_heads) + " must divide heads " + std::to_string(s.heads));
  require(s.rope_theta >= 0.0 && (s.rope_theta == 0.0 || s.head_dim % 2 == 0), "SelfAttentionKernel",
          "rope_theta must be >= 0, and head_dim even to rotate its halves");
  require(s.queries >= 0 && s.query_start >= 0 && s.query_start + s.query_rows() <= s.seq, "SelfAttentionKernel",
          "queries " + std::to_string(s.queries) + " from position " + std::to_string(s.query_start) +
              " must lie within the " + std::to_string(s.seq) + " positions");
  return s;
}

int64_t checked_activation_elements(int64_t elements) {
  require(elements > 0, "ActivationKernel", "elements must be positive");
  return elements;
}

int64_t checked_add_elements(int inputs, int64_t elements) {
  require(inputs >= 1 && elements > 0, "AddKernel", "needs at least 1 input and elements > 0");
  return elements;
}

void check_add_inputs(std::size_t given, int built) {
  require(given == static_cast<std::size_t>(built), "AddKernel::forward",
          "got " + std::to_string(given) + " inputs, built for " + std::to_string(built));
}

}  // namespace splitbrain::exec::kernels
