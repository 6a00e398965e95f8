#pragma once
// Destructors free CUDA and NCCL resources through the checking macros too, but must not throw:
// a failed release is printed ("splitbrain: rank R: ...") and the destructor goes on.

#include <cstdio>
#include <exception>

namespace splitbrain::exec::cuda {

template <class Release>
void release_in_destructor(Release&& release) noexcept {
  try {
    release();
  } catch (const std::exception& e) {
    std::fprintf(stderr, "splitbrain: %s\n", e.what());
  }
}

}  // namespace splitbrain::exec::cuda
