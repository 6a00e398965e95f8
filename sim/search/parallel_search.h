#pragma once
// The planner's searches spread independent pieces of work (a mesh, a candidate, a stage count)
// over threads; each piece counts its work in its own SearchStats, added up in piece order.

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <exception>
#include <mutex>
#include <thread>
#include <vector>

#include "sim/search/planner_request.h"
#include "sim/search/searched_plans.h"

namespace splitbrain::sim {

// PlannerRequest::search_threads, or one per core when it is 0.
int search_thread_count(const PlannerRequest& request);

// Adds `part`'s counts to `total`; the first reason a plan was left out stays the earliest part's.
void add_stats(SearchStats& total, const SearchStats& part);

// Runs `task(i)` for every i in [0, count) on up to `threads` threads, the lowest i first; the
// first exception stops the rest (at their next i) and is rethrown here.
template <typename Task>
void run_in_parallel(size_t count, int threads, const Task& task) {
  std::atomic<size_t> next{0};
  std::exception_ptr failure;
  std::mutex failure_mutex;
  const auto work = [&] {
    try {
      for (size_t i = next++; i < count; i = next++) task(i);
    } catch (...) {
      next = count;
      const std::lock_guard lock(failure_mutex);
      if (!failure) failure = std::current_exception();
    }
  };
  const size_t helpers_wanted = std::min(count, static_cast<size_t>(std::max(threads, 1))) - (count > 0 ? 1 : 0);
  std::vector<std::thread> helpers;
  for (size_t t = 0; t < helpers_wanted; ++t) helpers.emplace_back(work);
  work();
  for (std::thread& helper : helpers) helper.join();
  if (failure) std::rethrow_exception(failure);
}

}  // namespace splitbrain::sim
