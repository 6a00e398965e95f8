#include "tests/exec/equivalence/scrambled_link.h"

#include "tests/exec/equivalence/scrambled_array.h"

namespace splitbrain::equivalence {

void ScrambledLink::upload_values(std::span<const float> host, exec::DeviceArray& into) {
  InUse use{&into};
  HostArrayLink::upload_values(host, into);
}

void ScrambledLink::download_values(const exec::DeviceArray& from, std::span<float> host) {
  InUse use{&from};
  HostArrayLink::download_values(from, host);
}

}  // namespace splitbrain::equivalence
