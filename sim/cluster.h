#pragma once
// The cluster description the cost model reads: one kind of device, a hierarchy of levels
// (innermost first) each with the link its traffic crosses, the collective algorithm per kind,
// and how ranks are placed on devices.
//
// Units are in the names; GB = 1e9 everywhere. Link bandwidth is the per-device injection
// bandwidth at that level, in one direction (e.g. NVLink3: 300e9 per A100; 8 HDR HCAs per DGX
// node: 25e9 per GPU), because the alpha-beta formulas in collective_cost.cc charge each rank
// for the bytes it sends.

#include <array>
#include <cstdint>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "model/dtype.h"
#include "model/op.h"
#include "sim/collective_algorithm.h"
#include "sim/efficiency.h"
#include "sim/gemm_table.h"

namespace splitbrain::sim {

struct Device {
  std::string name;  // e.g. "A100-SXM4-80GB"
  double peak_fp32_flops_per_second = 0.0;
  double peak_fp16_flops_per_second = 0.0;
  double peak_bf16_flops_per_second = 0.0;
  int64_t memory_capacity_bytes = 0;
  double memory_bandwidth_bytes_per_second = 0.0;
  // Compute efficiency per op class; the curve's size is the op's FLOPs.
  EfficiencyCurve gemm_efficiency;
  EfficiencyCurve conv_efficiency;
  EfficiencyCurve elementwise_efficiency;
  // Memory-bandwidth efficiency; the curve's size is the bytes an op moves to and from memory.
  EfficiencyCurve memory_efficiency;
  // Backward kernels where they run at other rates than forward ones (measured by `splitbrain
  // calibrate`); absent, backward runs at the forward curves.
  struct BackwardCurves {
    std::optional<EfficiencyCurve> gemm;
    std::optional<EfficiencyCurve> conv;
    std::optional<EfficiencyCurve> elementwise;
    std::optional<EfficiencyCurve> memory;
    bool operator==(const BackwardCurves&) const = default;
  };
  BackwardCurves backward;  // input gradients (and memory-bound backward kernels)
  // gemm and conv weight gradients; absent: `backward`'s. The conv curve's size is the weight
  // gradient's reduction length, N x H_out x W_out of the local output (sim/compute_cost.cc).
  BackwardCurves weight_gradient;
  // Memory-bound op kinds whose kernels run far from the common memory curve (max pooling on
  // plain layouts, say), measured by calibrate: forward, and backward when it differs.
  struct OpMemoryCurves {
    EfficiencyCurve forward;
    std::optional<EfficiencyCurve> backward;
    bool operator==(const OpMemoryCurves&) const = default;
  };
  std::map<model::OpKind, OpMemoryCurves> op_memory_efficiency;
  // Seconds of exact kernel problems measured by `splitbrain calibrate --model` with the
  // executor's kernels, by sim::kernel_key (sim/kernel_problem.h); they replace the curves for
  // those problems. Empty for presets.
  struct MeasuredKernel {
    double forward_seconds = 0.0;
    double backward_input_seconds = 0.0;
    double backward_weight_seconds = 0.0;
    // The host's time to queue each pass's kernels (its calls' return, not the kernels' end),
    // where the device runs behind a queue (a GPU); zero where the host computes them (CPUs).
    double forward_host_seconds = 0.0;
    double backward_input_host_seconds = 0.0;
    double backward_weight_host_seconds = 0.0;
    bool operator==(const MeasuredKernel&) const = default;
  };
  std::map<std::string, MeasuredKernel> measured_kernels;
  // The last-level cache the ranks of a node share, in bytes (0: unknown, as for presets): how
  // much of a step's data stays warm between the kernels that use it (sim::caches_warm_fraction).
  double last_level_cache_bytes = 0.0;
  // The host's input batch into the device's memory, as the executor uploads it (a copy queued
  // behind the step's work): latency + bytes / bandwidth per upload, and the latency
  // alone for the loss's way back. Measured by `calibrate --backend cuda`; zero (presets, CPUs,
  // whose kernels read the batch where it lies) prices both at nothing.
  double host_transfer_latency_seconds = 0.0;
  double host_to_device_bytes_per_second = 0.0;
  // Where the device runs behind a queue: the host's seconds to queue one small kernel as the
  // executor's runtime does (an array allocated zero-filled, the step clock's mark), for the
  // kernels beside a measured problem's and each of the optimizer's updates. Measured by
  // `calibrate --backend cuda`; 0 where the host computes (CPUs) or unknown (presets).
  double launch_host_seconds = 0.0;
  // On a GPU, the runtime's own host time per layer pass beyond its kernels' queuing (the step
  // interpreter, the op, the buffers' allocation and the mark): what a short run of the model's
  // step took its host per forward and backward instruction beyond the simulator's price of their
  // kernels' queuing, their mean with the highest and lowest tenth left out
  // (tools/calibration/pass_host_excess.h). Measured by `calibrate --backend cuda --model`; 0
  // where the host computes (CPUs) or unknown (presets).
  double instruction_host_seconds = 0.0;
  // How many tensors the executor's optimizer updates (and clears) in one kernel on this device:
  // each kernel is one memory-bound pass over its tensors' bytes, so a small tensor in a batch
  // pays none of a kernel's fixed cost of its own. 1 where each tensor is a pass of its own (the
  // CPU executor loops over them, and presets); `calibrate --backend cuda` reads the backend's
  // (exec::Device::arrays_per_update_pass).
  int optimizer_tensors_per_kernel = 1;
  // Linear layers' efficiency by shape (sim/gemm_table.h), measured by `splitbrain calibrate`;
  // where present it prices linear layers instead of the gemm curves. Absent for presets.
  std::optional<GemmEfficiencyTable> gemm_table;

  double peak_flops_per_second(model::DType dtype) const;
  const EfficiencyCurve& efficiency(OpClass op_class) const;  // forward
  const EfficiencyCurve& efficiency(OpClass op_class, KernelPass pass) const;
  const EfficiencyCurve& memory_efficiency_of(KernelPass pass) const;
  // The op kind's own curve where calibrate measured one, else memory_efficiency_of(pass).
  const EfficiencyCurve& memory_efficiency_of(KernelPass pass, model::OpKind kind) const;

  bool operator==(const Device&) const = default;
};

// How a link's speed changes with the message size: at buffer size buffer_bytes[i] (the
// collective's size, as in collective_cost.h) the link streams at its bandwidth times factors[i];
// in between, interpolated in log size; beyond the ends, the nearest end's. Empty: 1 at every
// size. `calibrate` measures it where one line cannot follow the wire: a token bucket that
// passes a short burst at once (Linux tc, cloud networks), MPI switching algorithm or protocol
// by size. buffer_bytes increasing, factors positive.
struct SizeFactors {
  std::vector<double> buffer_bytes;
  std::vector<double> factors;

  double at(double buffer_bytes) const;
  bool operator==(const SizeFactors&) const = default;
};

struct Link {
  Link() = default;
  Link(double bandwidth, double latency, SizeFactors factors = {})
      : bandwidth_bytes_per_second(bandwidth), latency_seconds(latency), bandwidth_factors(std::move(factors)) {}

  double bandwidth_bytes_per_second = 0.0;  // per device, one direction
  double latency_seconds = 0.0;             // alpha: start-up cost of one message
  SizeFactors bandwidth_factors;            // optional

  // bandwidth_bytes_per_second * bandwidth_factors.at(buffer_bytes)
  double bandwidth_at(double buffer_bytes) const;
  bool operator==(const Link&) const = default;
};

// LogGP's overhead o of one pipeline message: what the message takes from a rank's host beyond
// the wire's time (the link's latency and bandwidth), fixed plus per byte. The sender's: its
// call (MPI_Isend hands the message to the transport; over TCP the kernel copies and sends it
// then). The receiver's: handling an arrived message, its copy out of the transport included,
// and what its arrival took from the compute it interrupted. Zero where not measured (presets).
struct MessageOverhead {
  double seconds = 0.0;
  double seconds_per_byte = 0.0;

  double at(double bytes) const { return seconds + seconds_per_byte * bytes; }
  bool operator==(const MessageOverhead&) const = default;
};

// One level of the hierarchy: `fan_out` units of the level below (devices, for the innermost
// level) make up one unit of this level, and they talk to each other over `link`.
struct Level {
  std::string name;  // e.g. "node", "cluster"
  int fan_out = 1;
  Link link;
  // Optional per collective kind: MPI and NCCL reach different bandwidths per collective over
  // the same wire (shared-memory MPI copies twice for a reduction, once for a gather), so
  // `splitbrain calibrate` fits each kind it measures. Kinds absent here use `link`.
  std::map<plans::CollectiveKind, Link> collective_links;
  // false: every group that crosses this level gets `link` to itself (a network port per
  // device, as the DGX presets describe). true: `link` is all that one unit of the level below
  // sends across this level, shared evenly by the groups of one collective that cross it from
  // that unit at once (one port per node: what `calibrate` measures across hosts, all groups
  // at once; sim/link_sharing.h counts the groups).
  bool uplink_shared = false;
  // A pipeline message's host overheads on its sender and its receiver when it crosses this
  // level (`calibrate` measures them through the executor's send and receive).
  MessageOverhead send_overhead = {};
  MessageOverhead receive_overhead = {};

  const Link& link_for(plans::CollectiveKind kind) const;

  bool operator==(const Level&) const = default;
};

// A level's message overheads by their keys in the cluster file, for the reader, the writer and
// the validation to walk alike (`LevelRef`: Level or const Level).
template <typename LevelRef>
auto message_overheads_by_key(LevelRef& level) {
  return std::array{std::pair{"send_overhead", &level.send_overhead},
                    std::pair{"receive_overhead", &level.receive_overhead}};
}

struct Cluster {
  std::string name;
  std::string description;
  std::vector<std::string> sources;  // where the numbers come from
  Device device;
  std::vector<Level> levels;  // innermost first; at least one
  CollectiveAlgorithms algorithms;
  // Fraction of overlappable communication (gradient buckets reduced during backward) that
  // really hides behind compute, in [-1, 1]. 1 where a copy engine or NIC moves the bytes (GPUs
  // with NCCL streams); on CPU ranks the same cores copy and reduce, so little hides. The rest,
  // (1 - overlap) x the reduction, is charged to the critical path: below 0 the reduction beside
  // the compute costs more than alone (each evicts the other's data from the caches; measured
  // by `calibrate --model` on the model's own step, tools/calibration/step_overlap_calibration.h).
  double communication_overlap = 1.0;
  // Optional: placement[r] is the device that rank r runs on (distinct devices). Empty means
  // rank r = device r, devices numbered node-major (device d sits in node d / fan_out[0]).
  std::vector<int> placement;
  // The CPU cores that the ranks of one node (a unit of the innermost level) compute on, as
  // `calibrate` found them: the CPUs its ranks may run on, together (the fewest of any host).
  // 0: not known (presets, GPUs). Where fewer than the node's ranks, they take turns on them
  // (sim/neighbour_speed.h). A speed-up alone cannot tell turns from contention: this host's
  // 2 vCPUs ran kernels 1.14x to 1.93x slower beside a busy neighbour from one hour to the next.
  int cpu_cores_per_node = 0;

  bool operator==(const Cluster&) const = default;
};

// Product of the fan-outs.
int64_t device_count(const Cluster& cluster);
// Ranks the cluster can host: placement.size() if a placement is given, else device_count.
int rank_count(const Cluster& cluster);
// The device that `rank` runs on; throws ClusterError when the cluster has no such rank.
int device_of_rank(const Cluster& cluster, int rank);

// Checks every value rule (positive sizes and bandwidths, efficiencies in (0, 1], algorithms
// that implement their kind, placement within range and distinct). Throws ClusterError
// "<source>: <field path>: <problem>", with field paths as in the JSON format.
void validate_cluster(const Cluster& cluster, std::string_view source);

// The index of the outermost level whose boundary the group crosses: 0 when all ranks sit
// inside one innermost unit (one node), 1 when they span nodes of one level-1 unit, ...
// Returns -1 for a group of fewer than two ranks (no link is crossed).
int level_spanned(const Cluster& cluster, std::span<const int> ranks);

// How a group sits on the hierarchy; what the hierarchical algorithm and the crossed-links
// rule need. fan_in[i] (i = 0..spanned_level) is the largest number of distinct level-(i-1)
// units (devices, for i = 0) that hold group members inside one level-i unit: for 16 ranks on
// two full DGX nodes, fan_in = {8, 2}; for one rank on each of 4 nodes, fan_in = {1, 4}.
struct GroupShape {
  int spanned_level = -1;
  std::vector<int> fan_in;
};
GroupShape group_shape(const Cluster& cluster, std::span<const int> ranks);

// The links that the group's traffic actually crosses, innermost first: those of levels
// 0..spanned_level with fan_in > 1. Per-kind links (Level::collective_links) are used where the
// level has one for `kind`. Empty for a group that crosses none.
// groups_crossing (one entry per level, or empty: 1 everywhere) divides the bandwidth of a level
// whose uplink is shared (sim/link_sharing.h).
std::vector<Link> crossed_links(const Cluster& cluster, const GroupShape& shape, plans::CollectiveKind kind,
                                std::span<const int> groups_crossing = {});

// The level-`level` unit that `device` sits in (level -1: the device itself).
int64_t unit_of_device(const Cluster& cluster, int device, int level);

// peak(dtype) * efficiency(op_class, flops). For elementwise ops this is the arithmetic rate
// only; their time is usually set by achieved_memory_bytes_per_second (take the roofline max).
double achieved_flops_per_second(const Cluster& cluster, OpClass op_class, model::DType dtype, double flops,
                                 KernelPass pass = KernelPass::forward);
// memory_bandwidth * memory_efficiency(bytes) (the backward curve for backward kernels).
double achieved_memory_bytes_per_second(const Cluster& cluster, double bytes, KernelPass pass = KernelPass::forward);
// The same for a kernel of op kind `kind` (its own curve where the device has one).
double achieved_memory_bytes_per_second(const Cluster& cluster, double bytes, KernelPass pass, model::OpKind kind);

}  // namespace splitbrain::sim
