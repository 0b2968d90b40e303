// What every fuzz target shares: bad input may only ever be an InputError
// (the CLI's exit 2, with a message); any other exception, a crash or a
// sanitizer report is a finding. An uncaught exception aborts, which
// libFuzzer reports with the input that caused it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "host/common.hpp"

namespace bulkscore::fuzz {

inline std::string text_of(const uint8_t* data, size_t size) {
  return std::string(reinterpret_cast<const char*>(data), size);
}

// Runs fn(); an InputError is the expected answer to bad input.
template <class Fn>
void expect_only_input_errors(Fn&& fn) {
  try {
    fn();
  } catch (const InputError&) {
  }
}

}  // namespace bulkscore::fuzz
