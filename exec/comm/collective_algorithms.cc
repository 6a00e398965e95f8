#include "exec/comm/collective_algorithms.h"

#include <cstdlib>
#include <iostream>

#include "exec/comm/mpi_check.h"

namespace splitbrain::exec::comm {
namespace {

constexpr const char* kLibnbcVariable = "coll_libnbc_iallreduce_algorithm";

}  // namespace

int libnbc_algorithm_number(AllReduceAlgorithm algorithm) {
  // 1 ring, 2 binomial, 3 rabenseifner, 4 recursive doubling.
  return algorithm == AllReduceAlgorithm::rabenseifner ? 3 : 4;
}

AllReduceAlgorithmSwitch::AllReduceAlgorithmSwitch(bool keep_users_choice) {
  if (keep_users_choice) return;
  int provided = 0;
  if (MPI_T_init_thread(MPI_THREAD_MULTIPLE, &provided) != MPI_SUCCESS) {
    std::cerr << "splitbrain: the MPI tool interface is unavailable; MPI chooses its own all-reduce algorithms\n";
    return;
  }
  int index = 0;
  int count = 0;
  if (MPI_T_cvar_get_index(kLibnbcVariable, &index) != MPI_SUCCESS ||
      MPI_T_cvar_handle_alloc(index, nullptr, &handle_, &count) != MPI_SUCCESS || count != 1) {
    std::cerr << "splitbrain: this MPI has no " << kLibnbcVariable << "; it chooses its own all-reduce algorithms\n";
    handle_ = nullptr;
    MPI_T_finalize();
    return;
  }
  SB_MPI_CHECK(MPI_T_cvar_read(handle_, &original_));
}

AllReduceAlgorithmSwitch::~AllReduceAlgorithmSwitch() {
  if (handle_ == nullptr) return;
  restore();
  MPI_T_cvar_handle_free(&handle_);
  MPI_T_finalize();
}

void AllReduceAlgorithmSwitch::select_for(int64_t bytes) {
  if (handle_ == nullptr) return;
  int number = libnbc_algorithm_number(plans::all_reduce_algorithm(bytes));
  SB_MPI_CHECK(MPI_T_cvar_write(handle_, &number));
}

void AllReduceAlgorithmSwitch::restore() {
  if (handle_ != nullptr) SB_MPI_CHECK(MPI_T_cvar_write(handle_, &original_));
}

AllReduceAlgorithmSwitch& process_all_reduce_switch() {
  // Never destroyed: a static's destructor would free the handle after MPI_Finalize, when Open MPI
  // has torn the variable down (it crashed there); the tool interface ends with the process.
  static auto* process_switch =
      new AllReduceAlgorithmSwitch(std::getenv("OMPI_MCA_coll_libnbc_iallreduce_algorithm") != nullptr);
  return *process_switch;
}

void start_float_sum_all_reduce(const void* send, float* receive, int count, MPI_Comm comm, MPI_Request* request) {
  AllReduceAlgorithmSwitch& algorithm = process_all_reduce_switch();
  algorithm.select_for(int64_t{count} * static_cast<int64_t>(sizeof(float)));
  const int started = MPI_Iallreduce(send, receive, count, MPI_FLOAT, MPI_SUM, comm, request);
  algorithm.restore();
  SB_MPI_CHECK(started);
}

}  // namespace splitbrain::exec::comm
