#pragma once
// Typed errors for bad user input. Library code throws them; only `main` turns them into an
// exit code (2). The message always names where the problem is: the file, the layer, the field.

#include <stdexcept>
#include <string>

namespace splitbrain {

// Base of every "the input you gave me is wrong" error; the command line exits 2 on these.
class InputError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// A model (zoo spec, model file, or graph built in code) is invalid.
class ModelError : public InputError {
 public:
  using InputError::InputError;
};

// A size (elements, parameters, bytes) that does not fit in 64 bits; the caller names where.
class SizeOverflowError : public InputError {
 public:
  using InputError::InputError;
};

}  // namespace splitbrain
