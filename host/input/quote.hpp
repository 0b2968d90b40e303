// Quoting input text in error messages (host only).
#pragma once

#include <string>
#include <string_view>

namespace bulkscore {

// `text` in double quotes for a message: at most `max_chars` bytes of it
// (then "..." and the full length), with quotes, backslashes and control
// characters escaped (\n, \t, \xHH), so that a hostile value can neither
// flood nor garble a terminal or a log line.
std::string quote_for_message(std::string_view text, size_t max_chars = 80);

}  // namespace bulkscore
