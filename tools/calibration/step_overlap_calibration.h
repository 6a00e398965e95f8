#pragma once
// How much a gradient reduction beside the backward costs on this machine, measured on the
// model's own step (sim::Cluster::communication_overlap). On CPU ranks the cores that compute also
// copy and sum the buckets, and a reduction of tens of MB beside a backward whose weights fill the
// cache costs more than the two in turn: vgg11-cifar10's data-parallel step on 2 ranks ran its
// backward slower with its 112 MB of buckets reduced beside it than with them reduced after it, while calibrate's
// collective probe (16 MiB beside a small convolution) found the two additive. So the step itself
// is run, its buckets reduced beside the backward and, alternately, after it, and the overlap is
// the one at which the simulator charges the overlapped step's reductions what they cost it.

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "sim/cluster.h"

namespace splitbrain::tools {

struct StepOverlap {
  double overlap = 0.0;             // sim::Cluster::communication_overlap
  std::vector<std::string> models;  // whose steps it was read from
};

// Collective over MPI_COMM_WORLD (2 or more ranks, the CPU backend, synthetic data): each model's
// data-parallel plan of `batch` samples over all ranks runs a few steps with its gradient buckets
// reduced during the backward and as many with each waited for as soon as it is full,
// alternately. A step's reductions cost it its time less the other step's without its
// communication (each the slowest rank's; the median over the pairs);
// the result is overlap_matching_cost (overlap_fit.h) of the models' priced costs under `cluster`
// against their measured costs, both summed over the models whose price moves with the overlap.
// nullopt where none does (every model's gradients in one bucket), none could run (a plan that
// does not fit this machine's memory is left out, saying why), or the steps ran faster than even
// full overlap prices them, beyond the pairs' spread: the link the step waits on is priced too
// high, which the overlap must not absorb (across two emulated nodes vgg11's reductions were priced
// above the measured step even all hidden, so the fit had read +1). `print`: progress and results.
std::optional<StepOverlap> measure_step_overlap(const std::vector<std::string>& model_specs, int64_t batch,
                                                const sim::Cluster& cluster, bool print);

}  // namespace splitbrain::tools
