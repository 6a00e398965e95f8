#pragma once
// The meshes the planner tries, with the meaning of each axis fixed by its name:
//   pipe   pipeline stages (layers are partitioned along it);
//   data   always splits the batch (data parallelism);
//   space  splits the height of images / the positions of sequences, or the batch;
//   model  per layer: splits the batch, the output features, the contraction (partial sums),
//          or replicates the layer: the SplitBrain / Gholami / SoyBean choice.
// Axes of size 1 are left out. Ranks are row-major over the axes in the order above, so `model`
// (the chattiest axis) lands on neighbouring ranks, inside a node of the cluster.

#include <string>
#include <vector>

#include "plans/mesh.h"

namespace splitbrain::sim {

struct SearchMesh {
  plans::Mesh mesh{{{"data", 1}}};
  int pipe = -1;  // axis indices, -1 when absent
  int data = -1;
  int space = -1;
  int model = -1;

  int size_of(int axis) const { return axis < 0 ? 1 : mesh.axis(axis).size; }
};

// Builds the mesh {pipe, data, space, model} without its size-1 axes (a mesh of one rank keeps
// a `data` axis of size 1).
SearchMesh make_search_mesh(int pipe, int data, int space, int model);

// Every mesh of `devices` ranks with pipe <= max_stages, space <= max_space and model <=
// max_model; in a stable order (pipe, space, model ascending).
std::vector<SearchMesh> enumerate_search_meshes(int devices, int max_stages, int max_space, int max_model);

// The positive divisors of n, ascending.
std::vector<int> divisors(int n);

}  // namespace splitbrain::sim
