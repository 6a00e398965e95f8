#include "exec/cpu/dnnl_check.h"

#include <oneapi/dnnl/dnnl_debug.h>

namespace splitbrain::exec::cpu {

namespace {
std::string describe(const char* file, int line, const char* call, const dnnl::error& cause) {
  return std::string(file) + ":" + std::to_string(line) + ": " + call + ": " + cause.what() + " (status " +
         dnnl_status2str(cause.status) + ")";
}
}  // namespace

DnnlError::DnnlError(const char* file, int line, const char* call, const dnnl::error& cause)
    : std::runtime_error(describe(file, line, call, cause)), status_(cause.status) {}

}  // namespace splitbrain::exec::cpu
