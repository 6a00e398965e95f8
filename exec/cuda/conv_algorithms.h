#pragma once
// Which cuDNN algorithm runs each pass of a convolution, chosen by timing them (cudnnFind*Ex, as
// PyTorch's cudnn.benchmark) once per distinct convolution in the process, and cached: a run
// builds its kernels once, a pipeline's micro-batch shapes repeat, and the search costs tens of
// milliseconds per shape. The algorithm fastest over five searches whose workspace fits the limit
// wins (one search is too noisy for small convolutions to give every process, calibrate's and the
// run's, the same choice); where the search cannot run (too little free memory for its scratch),
// cuDNN's heuristic ranking (cudnnGet*_v7) chooses instead.

#include <cudnn.h>

#include <cstddef>
#include <map>
#include <string>

#include "exec/cuda/cuda_context.h"

namespace splitbrain::exec::cuda {

struct ConvAlgorithms {
  cudnnConvolutionFwdAlgo_t forward{};
  std::size_t forward_workspace_bytes = 0;
  cudnnConvolutionBwdDataAlgo_t backward_data{};
  std::size_t backward_data_workspace_bytes = 0;
  cudnnConvolutionBwdFilterAlgo_t backward_filter{};
  std::size_t backward_filter_workspace_bytes = 0;
};

// The descriptors of one convolution as the kernel runs it (x possibly padded explicitly).
struct ConvDescriptors {
  cudnnTensorDescriptor_t input;
  cudnnFilterDescriptor_t filter;
  cudnnConvolutionDescriptor_t convolution;
  cudnnTensorDescriptor_t output;
  std::size_t input_bytes;
  std::size_t filter_bytes;
  std::size_t output_bytes;
};

// `key` names the convolution (its shape, padding as run, and math mode): equal keys must mean
// equal descriptors. Throws kernels::KernelArgumentError when a pass has no algorithm at all.
ConvAlgorithms conv_algorithms(CudaContext& context, const ConvDescriptors& descriptors, const std::string& key);

// The choices this process has made or adopted, by key: what `calibrate --backend cuda` saves
// (conv_algorithm_file.h), so that a run can time exactly the algorithms the calibration timed.
std::map<std::string, ConvAlgorithms> conv_algorithm_choices();
// Makes `choices` this process's: a convolution whose key is among them takes them without a
// search. Call it before the kernels are made.
void adopt_conv_algorithm_choices(const std::map<std::string, ConvAlgorithms>& choices);

}  // namespace splitbrain::exec::cuda
