#include "sim/search/search_mesh.h"

#include <algorithm>

namespace splitbrain::sim {

SearchMesh make_search_mesh(int pipe, int data, int space, int model) {
  std::vector<plans::MeshAxis> axes;
  SearchMesh result;
  auto add = [&](const char* name, int size, int& index) {
    if (size <= 1) return;
    index = static_cast<int>(axes.size());
    axes.push_back({name, size});
  };
  add("pipe", pipe, result.pipe);
  add("data", data, result.data);
  add("space", space, result.space);
  add("model", model, result.model);
  if (axes.empty()) {
    result.data = 0;
    axes.push_back({"data", 1});
  }
  result.mesh = plans::Mesh(std::move(axes));
  return result;
}

std::vector<int> divisors(int n) {
  std::vector<int> result;
  for (int d = 1; static_cast<long long>(d) * d <= n; ++d) {
    if (n % d != 0) continue;
    result.push_back(d);
    if (d != n / d) result.push_back(n / d);
  }
  std::sort(result.begin(), result.end());
  return result;
}

std::vector<SearchMesh> enumerate_search_meshes(int devices, int max_stages, int max_space, int max_model) {
  std::vector<SearchMesh> meshes;
  for (int pipe : divisors(devices)) {
    if (pipe > max_stages) break;
    const int rest = devices / pipe;
    for (int space : divisors(rest)) {
      if (space > max_space) break;
      for (int model : divisors(rest / space)) {
        if (model > max_model) break;
        meshes.push_back(make_search_mesh(pipe, rest / space / model, space, model));
      }
    }
  }
  return meshes;
}

}  // namespace splitbrain::sim
