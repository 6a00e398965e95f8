#include "model/error_site.h"

#include <fmt/format.h>

#include "model/errors.h"

namespace splitbrain::model {

void ErrorSite::fail(std::string_view field, std::string_view problem) const {
  std::string where(source);
  if (!layer.empty()) where += fmt::format(": layer '{}'", layer);
  if (!field.empty()) where += fmt::format(": {}", field);
  throw ModelError(fmt::format("{}: {}", where, problem));
}

}  // namespace splitbrain::model
