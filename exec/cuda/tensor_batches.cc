#include "exec/cuda/tensor_batches.h"

namespace splitbrain::exec::cuda {

std::vector<TensorBatch> tensor_batches(const std::vector<ChunkedTensor>& tensors) {
  std::vector<TensorBatch> batches;
  for (const ChunkedTensor& tensor : tensors) {
    if (tensor.elements == 0) continue;  // no chunk would name it
    if (batches.empty() || batches.back().count == kTensorsPerBatch) batches.emplace_back();
    TensorBatch& batch = batches.back();
    ChunkedTensor& placed = batch.tensors[batch.count++];
    placed = tensor;
    placed.first_chunk = batch.chunks;
    batch.chunks += (tensor.elements + kElementsPerChunk - 1) / kElementsPerChunk;
  }
  return batches;
}

}  // namespace splitbrain::exec::cuda
