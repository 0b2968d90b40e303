// Shared basics: the host/device qualifier macro and the typed errors the
// library throws. The library never prints and never aborts; the CLI maps
// these exceptions to messages and exit codes (InputError -> 2, others -> 1).
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>

// BULKSCORE_HD marks code that must compile for host and device (plugin rules,
// the fused per-node evaluation). Under g++ it vanishes.
#if defined(__CUDACC__)
#define BULKSCORE_HD __host__ __device__ __forceinline__
#else
#define BULKSCORE_HD inline
#endif

namespace bulkscore {

// SplitMix64's output function (Steele, Lea, Flood 2014): a stateless 64-bit
// mixer, defined by integer arithmetic alone. Used for the seeded tie-break
// and the deterministic generators.
BULKSCORE_HD uint64_t mix64(uint64_t z) {
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

// Go's int64 arithmetic: sums, differences and products wrap (two's
// complement) where C++'s signed overflow is undefined. Quantities reach
// int64's limits in real input (a request of 9223372036854775807m is valid
// JSON); upstream's node sums and scoring formulas then wrap, and ours must
// wrap the same way, never be undefined.
BULKSCORE_HD int64_t go_add(int64_t a, int64_t b) {
  return static_cast<int64_t>(static_cast<uint64_t>(a) + static_cast<uint64_t>(b));
}
BULKSCORE_HD int64_t go_sub(int64_t a, int64_t b) {
  return static_cast<int64_t>(static_cast<uint64_t>(a) - static_cast<uint64_t>(b));
}
BULKSCORE_HD int64_t go_mul(int64_t a, int64_t b) {
  return static_cast<int64_t>(static_cast<uint64_t>(a) * static_cast<uint64_t>(b));
}

// Base of every error bulkscore throws.
class Error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Bad user input: malformed JSON/YAML, bad quantities, unknown plugins,
// invalid configuration. The message names the file, the object and the field.
class InputError : public Error {
 public:
  using Error::Error;
};

// A requested backend cannot be used (no CUDA in the build, no device).
class BackendUnavailable : public Error {
 public:
  using Error::Error;
};

// A CUDA runtime call failed (including out-of-memory on the device).
class CudaError : public Error {
 public:
  using Error::Error;
};

// The device ran out of memory: the engine falls back to the CPU backend.
class DeviceOutOfMemory : public CudaError {
 public:
  using CudaError::CudaError;
};

}  // namespace bulkscore
