#pragma once
// The thread that drives a GPU gets a CPU of its own.
//
// Contract of give_calling_thread_its_own_cpu():
//   - Of the CPUs this process may run on now (the calling thread's mask, c of them), the calling
//     thread is pinned to one: the CPU it runs on at the call when that is among them, else the
//     lowest; every other thread of the process moves to the other c - 1. With c < 2 nothing
//     changes and it returns nullopt.
//   - Threads that the calling thread starts afterwards inherit its single CPU, so call it once the
//     helper threads exist (the batch prefetcher, the watchdog, the CUDA and NCCL threads).
//   - Throws std::system_error when the OS refuses an affinity call.
//
// Why: a step on a GPU is paced by the host when its kernels are shorter than their queuing
// (vgg11-cifar10 at batch 64 on an H200, ~60 passes), and then its time is the driving thread's. The batch
// prefetcher takes about a fifth of a CPU while it makes the next step's samples (ps on the H200
// machine), and nothing kept the scheduler from running it on the driver's CPU. Alone, the driver
// has a CPU of its own and a known one (the commands print it). What it does not do: remove the
// spread of that step between processes on a shared virtual machine (results/gpu-driver-thread/);
// that comes from the host.

#include <optional>
#include <vector>

namespace splitbrain::exec::comm {

struct DriverThreadCpus {
  int driver_cpu = 0;            // the calling thread's only CPU
  std::vector<int> helper_cpus;  // every other thread's, ascending
};

std::optional<DriverThreadCpus> give_calling_thread_its_own_cpu();

}  // namespace splitbrain::exec::comm
