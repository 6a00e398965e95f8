#pragma once
// SB_HOST_DEVICE marks an inline function that the host's compiler and nvcc both compile, so a
// piece of arithmetic that the CPU and the GPU backends must do identically is written once (in a
// header a .cu file can include: C++17, no host-only library calls).

#if defined(__CUDACC__)
#define SB_HOST_DEVICE __host__ __device__
#else
#define SB_HOST_DEVICE
#endif
