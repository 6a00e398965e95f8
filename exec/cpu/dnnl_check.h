#pragma once
// One macro around every oneDNN call (llm.c's habit): a dnnl::error becomes a DnnlError whose
// message names the file, the line, the call as written and the library's own message and status,
// e.g. "exec/cpu/conv2d.cc:57: conv forward primitive_desc(...): could not create a primitive
// descriptor ... (status unimplemented)".

#include <stdexcept>
#include <string>

#include <oneapi/dnnl/dnnl.hpp>

namespace splitbrain::exec::cpu {

class DnnlError : public std::runtime_error {
 public:
  DnnlError(const char* file, int line, const char* call, const dnnl::error& cause);
  dnnl_status_t status() const { return status_; }

 private:
  dnnl_status_t status_;
};

}  // namespace splitbrain::exec::cpu

// Variadic so that calls with commas in them (constructors with several arguments) pass whole.
#define SB_DNNL_CHECK(...)                                                                        \
  do {                                                                                            \
    try {                                                                                         \
      __VA_ARGS__;                                                                                \
    } catch (const dnnl::error& sb_dnnl_error_) {                                                 \
      throw ::splitbrain::exec::cpu::DnnlError(__FILE__, __LINE__, #__VA_ARGS__, sb_dnnl_error_); \
    }                                                                                             \
  } while (false)
