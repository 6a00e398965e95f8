#include "exec/comm/progress_pump.h"

#include <atomic>
#include <chrono>
#include <stdexcept>
#include <utility>

#include "exec/comm/mpi_check.h"

namespace splitbrain::exec::comm {
namespace {

// The process's pump; MPI is one per process, and so is the pump that drives it.
std::atomic<ProgressPump*> process_pump{nullptr};

}  // namespace

ProgressHold::ProgressHold(ProgressPump* pump) : pump_(pump) {
  if (pump_ != nullptr) pump_->acquire();
}

ProgressHold::~ProgressHold() {
  if (pump_ != nullptr) pump_->release();
}

ProgressHold::ProgressHold(ProgressHold&& other) noexcept : pump_(std::exchange(other.pump_, nullptr)) {}

ProgressHold& ProgressHold::operator=(ProgressHold&& other) noexcept {
  if (this != &other) {
    if (pump_ != nullptr) pump_->release();
    pump_ = std::exchange(other.pump_, nullptr);
  }
  return *this;
}

ProgressPump::ProgressPump(MPI_Comm world, double interval_seconds) : interval_seconds_(interval_seconds) {
  if (!(interval_seconds > 0)) throw std::invalid_argument("ProgressPump: the interval must be positive");
  ProgressPump* expected = nullptr;
  if (!process_pump.compare_exchange_strong(expected, this)) {
    throw std::logic_error("ProgressPump: this process already has a pump");
  }
  try {
    SB_MPI_CHECK(MPI_Comm_dup(world, &quiet_));
  } catch (...) {
    process_pump.store(nullptr);
    throw;
  }
  thread_ = std::thread([this] { run(); });
}

ProgressPump::~ProgressPump() {
  process_pump.store(nullptr);
  {
    std::lock_guard lock(mutex_);
    stop_ = true;
  }
  wake_.notify_all();
  thread_.join();
  MPI_Comm_free(&quiet_);
}

long ProgressPump::probes() const {
  std::lock_guard lock(mutex_);
  return probes_;
}

void ProgressPump::acquire() {
  {
    std::lock_guard lock(mutex_);
    ++holds_;
  }
  wake_.notify_all();
}

void ProgressPump::release() {
  std::lock_guard lock(mutex_);
  --holds_;
}

void ProgressPump::run() {
  const auto interval = std::chrono::duration<double>(interval_seconds_);
  std::unique_lock lock(mutex_);
  while (true) {
    wake_.wait(lock, [this] { return stop_ || holds_ > 0; });
    if (stop_) return;
    lock.unlock();
    int matched = 0;
    // Errors are the working thread's to report (its own calls on the same transports fail too).
    MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, quiet_, &matched, MPI_STATUS_IGNORE);
    std::this_thread::sleep_for(interval);
    lock.lock();
    ++probes_;
  }
}

ProgressHold keep_mpi_progressing() { return ProgressHold(process_pump.load()); }

const ProgressPump* process_progress_pump() { return process_pump.load(); }

}  // namespace splitbrain::exec::comm
