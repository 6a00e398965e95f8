#pragma once
// Embedding lookup (PyTorch's nn.Embedding) on a table that may be split by rows
// (vocabulary) across ranks: this rank holds rows [row_begin, row_end) of the global table, as a
// [row_end - row_begin, dim] array. Ids outside that range give zero rows here; the runtime sums
// the partial outputs across the vocabulary axis. Ids are fp32, as every activation the runtime
// holds (token ids up to 2^24 are exact); an id that is not an integer in [0, num_embeddings) is
// a KernelArgumentError naming it and its position, where the kernel can read the ids on the host
// (the CPU's; a GPU's for host ids). Ids in a GPU's memory are the caller's to check
// (check_embedding_ids, where they came from): an id outside the local rows, valid or not, reads
// and writes nothing there.

#include <cstdint>

namespace splitbrain::exec::kernels {

struct EmbeddingShape {
  int64_t count = 1;           // ids looked up (N * T)
  int64_t dim = 1;             // local width of a row
  int64_t num_embeddings = 1;  // rows of the GLOBAL table (ids must be in [0, num_embeddings))
  int64_t row_begin = 0;       // the local rows, [row_begin, row_end); whole table: 0, num_embeddings
  int64_t row_end = 1;
};

class EmbeddingKernel {
 public:
  virtual ~EmbeddingKernel() = default;
  virtual const EmbeddingShape& shape() const = 0;

  // y[i] = table[ids[i] - row_begin] when the id is local, else zeros. y is [count, dim].
  virtual void forward(const float* ids, const float* table, float* y) = 0;
  // dtable[ids[i] - row_begin] += dy[i] for local ids. ADDS into dtable (zero it first): a table
  // tied to an output head (GPT-2's wte and lm_head) gets its gradient from both uses.
  virtual void backward(const float* ids, const float* dy, float* dtable) = 0;
};

// ids for learned positions: ids[n * seq + t] = position_begin + t (position_begin is the first
// local position when the sequence is split). The same index arithmetic for every backend.
void embedding_positions(int64_t batch, int64_t seq, int64_t position_begin, float* ids);

// Throws KernelArgumentError at the first id that is not an integer in [0, num_embeddings), for
// the backends that can read ids on the host.
void check_embedding_ids(const EmbeddingShape& shape, const float* ids);

}  // namespace splitbrain::exec::kernels
