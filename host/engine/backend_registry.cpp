// The process-wide backend registry (host/engine/backend.hpp).
#include <algorithm>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "host/common.hpp"
#include "host/engine/backend.hpp"
#include "host/input/quote.hpp"

namespace bulkscore {
namespace {

struct Registry {
  std::mutex mutex;
  std::vector<BackendFactory> factories;  // "cpu" first
};

// A function-local static: safe to use from other translation units' static
// initializers (the CUDA registrar runs as one).
Registry& registry() {
  static Registry* r = [] {
    auto* reg = new Registry;  // never destroyed: registrars may outlive static destruction order
    reg->factories.push_back(BackendFactory{"cpu", [] { return std::string(); },
                                            [](const BackendOptions& o) { return o.executor ? make_cpu_backend(o.executor) : make_cpu_backend(o.threads); }});
    return reg;
  }();
  return *r;
}

// A copy, so that the factory runs without the lock held.
bool find(const std::string& name, BackendFactory& out) {
  Registry& r = registry();
  std::lock_guard<std::mutex> lock(r.mutex);
  for (const BackendFactory& f : r.factories) {
    if (f.name == name) {
      out = f;
      return true;
    }
  }
  return false;
}

std::string not_registered(const std::string& name) {
  if (name == "cuda") {
    return "this build has no CUDA backend (configured without a CUDA compiler, or bulkscore_cuda not linked)";
  }
  return "this build has no backend named " + quote_for_message(name);
}

}  // namespace

void register_backend(BackendFactory factory) {
  if (factory.name.empty() || !factory.make) throw Error("register_backend: a backend needs a name and a factory");
  if (!factory.unavailable_reason) factory.unavailable_reason = [] { return std::string(); };
  Registry& r = registry();
  std::lock_guard<std::mutex> lock(r.mutex);
  for (BackendFactory& f : r.factories) {
    if (f.name == factory.name) {
      f = std::move(factory);
      return;
    }
  }
  r.factories.push_back(std::move(factory));
}

std::vector<std::string> compiled_backends() {
  Registry& r = registry();
  std::lock_guard<std::mutex> lock(r.mutex);
  std::vector<std::string> names;
  for (const BackendFactory& f : r.factories) names.push_back(f.name);
  return names;
}

bool backend_registered(const std::string& name) {
  BackendFactory f;
  return find(name, f);
}

std::string backend_unavailable_reason(const std::string& name) {
  BackendFactory f;
  if (!find(name, f)) return not_registered(name);
  return f.unavailable_reason();
}

std::unique_ptr<Backend> make_backend(const std::string& name, const BackendOptions& options) {
  BackendFactory f;
  if (!find(name, f)) throw BackendUnavailable(name + " backend unavailable: " + not_registered(name));
  return f.make(options);
}

std::unique_ptr<Backend> make_cuda_backend() { return make_backend("cuda"); }

std::string cuda_unavailable_reason() { return backend_unavailable_reason("cuda"); }

}  // namespace bulkscore
