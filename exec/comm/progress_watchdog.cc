#include "exec/comm/progress_watchdog.h"

#include <fmt/format.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "exec/comm/mpi_check.h"

namespace splitbrain::exec::comm {
namespace {

std::atomic<int64_t> g_progress{0};

int64_t now_ms() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

// The slots live in memory other processes read and write: plain atomic loads and stores.
int64_t load(const int64_t& value) { return __atomic_load_n(&value, __ATOMIC_ACQUIRE); }
void store(int64_t& value, int64_t v) { __atomic_store_n(&value, v, __ATOMIC_RELEASE); }

}  // namespace

void note_progress() { g_progress.fetch_add(1, std::memory_order_relaxed); }

ProgressWatchdog::ProgressWatchdog(MPI_Comm world, double timeout_seconds) : timeout_seconds_(timeout_seconds) {
  int rank = 0;
  SB_MPI_CHECK(MPI_Comm_rank(world, &rank));
  SB_MPI_CHECK(MPI_Comm_split_type(world, MPI_COMM_TYPE_SHARED, rank, MPI_INFO_NULL, &node_));
  int local_ranks = 0;
  SB_MPI_CHECK(MPI_Comm_size(node_, &local_ranks));
  void* base = nullptr;
  SB_MPI_CHECK(MPI_Win_allocate_shared(sizeof(Slot), sizeof(Slot), MPI_INFO_NULL, node_, &base, &window_));
  mine_ = new (base) Slot{0, now_ms(), rank, static_cast<int32_t>(::getpid())};
  SB_MPI_CHECK(MPI_Barrier(node_));  // every slot is written before anyone reads it
  for (int r = 0; r < local_ranks; ++r) {
    MPI_Aint size = 0;
    int unit = 0;
    void* slot = nullptr;
    SB_MPI_CHECK(MPI_Win_shared_query(window_, r, &size, &unit, &slot));
    slots_.push_back(static_cast<Slot*>(slot));
  }
  thread_ = std::thread([this] { watch(); });
}

ProgressWatchdog::~ProgressWatchdog() {
  stop_ = true;
  if (thread_.joinable()) thread_.join();
  MPI_Win_free(&window_);
  MPI_Comm_free(&node_);
}

void ProgressWatchdog::watch() {
  const auto timeout_ms = static_cast<int64_t>(timeout_seconds_ * 1000.0);
  const int64_t poll_ms = std::min<int64_t>(1000, std::max<int64_t>(timeout_ms / 4, 10));
  std::vector<int64_t> last_progress(slots_.size(), -1);
  std::vector<int64_t> last_change_ms(slots_.size(), now_ms());
  while (!stop_) {
    std::this_thread::sleep_for(std::chrono::milliseconds(poll_ms));
    const int64_t now = now_ms();
    store(mine_->progress, g_progress.load(std::memory_order_relaxed));
    store(mine_->published_ms, now);
    std::string stopped;
    std::string hung;
    int hung_ranks = 0;
    int reporter = -1;  // the lowest rank still running
    for (size_t i = 0; i < slots_.size(); ++i) {
      const Slot& slot = *slots_[i];
      const int64_t progress = load(slot.progress);
      if (progress != last_progress[i]) {
        last_progress[i] = progress;
        last_change_ms[i] = now;
      }
      const int64_t since_published_ms = now - load(slot.published_ms);
      if (since_published_ms > timeout_ms) {
        stopped += fmt::format(" {} (pid {})", slot.world_rank, slot.pid);
        continue;
      }
      if (reporter < 0 || slot.world_rank < reporter) reporter = slot.world_rank;
      // Hung only while its watchdog still publishes: a rank stopped just after a wait with no
      // progress (a collective its peer was late to) is silent, and is named stopped once the
      // silence passes the timeout.
      if (now - last_change_ms[i] > timeout_ms && since_published_ms <= 2 * poll_ms) {
        hung += fmt::format(" {}", slot.world_rank);
        ++hung_ranks;
      }
    }
    if (reporter != mine_->world_rank) continue;
    std::string message;
    if (!stopped.empty()) {
      message = fmt::format("rank{} made no progress for {:g} s and no longer runs (stopped or killed)", stopped,
                            timeout_seconds_);
    } else if (hung_ranks == static_cast<int>(slots_.size())) {
      message =
          fmt::format("no rank made progress for {:g} s (ranks{} all wait: a deadlock or a hung peer on another node)",
                      timeout_seconds_, hung);
    } else if (!hung.empty()) {
      message = fmt::format("rank{} made no progress for {:g} s (hung)", hung, timeout_seconds_);
    }
    if (message.empty()) continue;
    std::fprintf(stderr, "splitbrain: watchdog: %s; ending the job (--watchdog-seconds sets the limit)\n",
                 message.c_str());
    std::fflush(stderr);
    std::_Exit(3);  // the launcher ends the others; no MPI call from this thread
  }
}

}  // namespace splitbrain::exec::comm
