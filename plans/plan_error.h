#pragma once
// PlanError: a mesh, layout or plan the user (or a plan file) gave us is invalid. It is an
// InputError, so the command line exits 2 on it. Messages always name the field at fault, e.g.
//   "mesh axis 1 ('model'): size must be >= 1, got 0"
//   "layout dim 1: split by [model] (4 ways) but extent 10 is not divisible by 4"

#include "model/errors.h"

namespace splitbrain::plans {

class PlanError : public splitbrain::InputError {
 public:
  using splitbrain::InputError::InputError;
};

}  // namespace splitbrain::plans
