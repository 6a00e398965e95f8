#pragma once
// A plan that a trainer's launch configuration cannot express. The message names the plan part
// that cannot be written (a layer and its field, or a plan option); exporting one plan exits 2
// with it, exporting a ranking skips the plan and prints it.

#include "model/errors.h"

namespace splitbrain::tools {

class ExportRefusal : public InputError {
 public:
  using InputError::InputError;
};

}  // namespace splitbrain::tools
