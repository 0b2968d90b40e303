// Compiled into each target that links bulkscore_cuda (an INTERFACE source,
// kernels/CMakeLists.txt), not into the static library itself: a registrar
// inside libbulkscore_cuda.a would run only if the linker happened to pull
// its object file in, and nothing refers to it. As a source of the final
// executable it is always linked, and it runs before main.
#include "kernels/register_cuda_backend.hpp"

namespace {

const bool kCudaBackendRegistered = [] {
  bulkscore::cuda::register_backend();
  return true;
}();

}  // namespace
