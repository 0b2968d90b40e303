// resource.Quantity parsing: exceptions other than InputError, overflow (UBSan)
// or slow inputs are findings; a parsed value rescales consistently.
#include <cstdlib>

#include "host/input/quantity.hpp"
#include "tests/fuzz/fuzz_util.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace bulkscore;
  const std::string text = fuzz::text_of(data, size);
  int64_t value = 0, milli = 0;
  bool have_value = false, have_milli = false;
  fuzz::expect_only_input_errors([&] {
    value = parse_quantity_scaled(text, 0);
    have_value = true;
  });
  fuzz::expect_only_input_errors([&] {
    milli = parse_quantity_scaled(text, 3);
    have_milli = true;
  });
  // Value() is MilliValue() / 1000 rounded up (away from zero for negatives).
  if (have_value && have_milli) {
    const int64_t q = milli / 1000, r = milli % 1000;
    const int64_t expect = r == 0 ? q : (milli > 0 ? q + 1 : q - 1);
    if (value != expect) std::abort();
  }
  // MilliValue never fits where Value does not.
  if (have_milli && !have_value) std::abort();
  return 0;
}
