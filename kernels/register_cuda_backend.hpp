// The CUDA backend's entry points. The core library never calls them (GPU
// code depends on CPU code, never the reverse); the engine finds the backend
// through the registry in host/engine/backend.hpp once it is registered.
//
// Registration: every target that links bulkscore_cuda through CMake
// compiles kernels/register_cuda_backend.cpp into itself (an INTERFACE
// source of bulkscore_cuda), whose static initializer calls
// cuda::register_backend() before main. Code that links libbulkscore_cuda.a
// some other way calls it itself before creating an Engine; calling it again
// is harmless.
#pragma once

#include <memory>
#include <string>

#include "host/engine/backend.hpp"

namespace bulkscore::cuda {

// Adds "cuda" to the backend registry.
void register_backend();

// "" when a device answers and can run this build's kernels; else why not.
std::string unavailable_reason();

// Throws BackendUnavailable with unavailable_reason() when it is not "".
std::unique_ptr<Backend> make_backend();

}  // namespace bulkscore::cuda
