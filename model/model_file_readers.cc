#include "model/model_file_readers.h"

#include <map>
#include <mutex>

namespace splitbrain::model {
namespace {

struct Registry {
  std::mutex mutex;
  std::map<std::string, ModelFileReader, std::less<>> readers;
};

Registry& registry() {
  static Registry instance;
  return instance;
}

}  // namespace

void register_model_file_reader(const std::string& extension, ModelFileReader reader) {
  Registry& r = registry();
  const std::lock_guard lock(r.mutex);
  r.readers[extension] = std::move(reader);
}

const ModelFileReader* find_model_file_reader(const std::filesystem::path& path) {
  Registry& r = registry();
  const std::lock_guard lock(r.mutex);
  const auto it = r.readers.find(path.extension().string());
  // Readers are registered once at start and never removed, so the pointer stays valid.
  return it == r.readers.end() ? nullptr : &it->second;
}

}  // namespace splitbrain::model
