// A device backend's test hook: fail at a chosen point of a chosen
// evaluation, as a device would, to prove that the engine's fallback loses
// nothing. The CUDA backend reads BULKSCORE_CUDA_FAULT_AT=N[:POINT] (a GPU
// run, scripts/gpu-run.sh's fault step); tests/test_backend_fallback.cpp's
// fake devices fail at the same points without a GPU.
//
// POINT (default `filter`) and what fails there:
//   filter    a device error after the filter kernels were queued
//   prescore  a device error after the feasible-set PreScore's arena was
//             uploaded (queries with a feasible-set PreScore that score)
//   tie       a device error in the random tie-break's draw, with the tied
//             nodes' copy (or ranking) queued (a real tie under random)
//   lists     a device error while the per-node lists come back
//             (explain, a cache state's score lists)
//   state     out of device memory growing the score lists a cache state
//             is built from (want_scores): the engine retries without them
//             and keeps the device
//   preempt   a device error after DefaultPreemption's dry-run kernel was
//             queued (a preempting pod with victims on the bulk path): the
//             engine falls back and dry-runs on the CPU
// The N-th arrival at POINT fails, once; N counts from 1, 0 never fails.
#pragma once

#include <cstdint>
#include <string>

namespace bulkscore {

enum class FaultPoint : uint8_t { kFilter, kPreScore, kTie, kLists, kState, kPreempt, kCount };

const char* fault_point_name(FaultPoint p);

struct FaultInjection {
  FaultPoint point = FaultPoint::kFilter;
  uint64_t at = 0;  // 0: never
  uint64_t arrivals = 0;

  // "N" or "N:POINT"; nullptr or "" never fails. InputError on anything else.
  static FaultInjection parse(const char* spec);

  // Counts an arrival at `p`; true when this one is to fail.
  bool arrive(FaultPoint p) { return at != 0 && p == point && ++arrivals == at; }

  // The failure's message: "<who>: injected fault (BULKSCORE_CUDA_FAULT_AT=N:point) <what>".
  std::string message(const char* who) const;
};

}  // namespace bulkscore
