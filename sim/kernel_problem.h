#pragma once
// How the simulator keys a kernel problem (plans/kernel_problem.h, the exact problem a rank's
// layer runs, as the executor builds it). `splitbrain calibrate --model` times these problems
// with the executor's own kernels, and the cost model reads the measured seconds back by key
// (Device::measured_kernels): small or oddly split images run far from the FLOP-sized curve (a
// 2x2 image split in two rows runs its kernel on 3 rows for 1 output row), small micro-batches of
// memory-bound ops stay in the caches, and only a measurement of the very shape says how far.

#include <cstdint>
#include <string>

#include "model/model.h"
#include "plans/mesh.h"
#include "plans/kernel_problem.h"
#include "plans/op_sharding.h"
#include "sim/cluster.h"

namespace splitbrain::sim {

// The problems are plans'; these names keep the simulator's vocabulary.
using plans::ActivationProblem;
using plans::AttentionProblem;
using plans::ConvProblem;
using plans::kernel_problem;
using plans::KernelProblem;
using plans::LayerNormProblem;
using plans::LinearProblem;
using plans::LossProblem;
using plans::PoolProblem;
using plans::with_work_items;
using plans::work_items;

// Ranks computing at once on one node of `cluster` under a plan on `mesh`: cores (or GPUs) of a
// node share memory bandwidth, caches and, with SMT, execution units, so a kernel runs slower
// beside busy neighbours; a measured problem is keyed by how many there were.
int busy_ranks_per_node(const Cluster& cluster, const plans::Mesh& mesh);

// Canonical text of a problem timed with `busy_ranks` ranks per node computing at once, the key
// of Device::measured_kernels, e.g. "conv2d n32 c64 h18 w16 k128 r3x3 s1x1 p0,0,1,1 d1x1 g1 bias,
// 2 busy", "maxpool n16 c32 h28 w28 r2x2 s2x2 p0,0, 1 busy", "relu 401408, 2 busy", "dropout 262144 p0.5, 1 busy",
// "linear m64 k4096 n1024 bias, 1 busy".
//
// Calibrate times every problem twice: with the caches swept first (the data the kernel reads
// comes from memory, as in a model whose step does not fit the last-level cache) and with them
// warm (it does fit, so the layer before left its output and the weights in the cache); the warm
// time's key ends in ", caches warm".
enum class CacheState { swept, warm };
std::string kernel_key(const KernelProblem& problem, int busy_ranks, CacheState caches = CacheState::swept);

}  // namespace splitbrain::sim
