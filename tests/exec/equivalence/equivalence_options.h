#pragma once
// The command line of exec_equivalence_tests (see equivalence_main.cc).

#include <cstdint>
#include <string>

namespace splitbrain::equivalence {

struct Options {
  std::string write_reference_path;  // 1-rank mode: where to write the reference
  std::string reference_path;        // compare mode: the reference to read
  // The model trained (a zoo spec or model file) and its global batch (--model, --batch): an
  // image net gets formula images, a token model formula token sequences (plan_run.h).
  std::string model_spec = "fashion-vgg";
  int64_t batch = 16;
  // --scrambled-device: train through ScrambledDevice (scrambled_device.h), whose arrays hold
  // garbage except inside the Device's calls.
  bool scrambled_device = false;
};

Options& options();

}  // namespace splitbrain::equivalence
