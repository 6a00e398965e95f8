#pragma once
// The error for a bad cluster description: a malformed cluster file, an unknown preset, a
// rank that the cluster does not have. Messages name the file (or preset) and the field path,
// e.g. "clusters/x.json: levels[1].link.bandwidth_bytes_per_second: must be positive", so the
// user can fix the input without reading our source.

#include "model/errors.h"

namespace splitbrain::sim {

class ClusterError : public splitbrain::InputError {
 public:
  using splitbrain::InputError::InputError;
};

}  // namespace splitbrain::sim
