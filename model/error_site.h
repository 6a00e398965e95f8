#pragma once
// Where a model error happened: which file (or zoo entry) and which layer. Every ModelError the
// graph code throws goes through here so messages read the same everywhere:
//   "<source>: layer '<layer>': <field>: <problem>"

#include <string>
#include <string_view>

namespace splitbrain::model {

struct ErrorSite {
  std::string_view source;  // a file path, "zoo model 'vgg16'", or "model 'x'" for graphs built in code
  std::string_view layer;   // empty for errors about the whole model

  [[noreturn]] void fail(std::string_view field, std::string_view problem) const;
};

}  // namespace splitbrain::model
