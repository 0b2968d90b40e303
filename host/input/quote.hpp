// Quoting input text in error messages and warnings (host only).
//
// Whatever a message echoes of its input (a name, a value, a map key, a
// file's content) goes through one of these, so that a hostile input can
// neither flood a log line nor reach the terminal as an escape sequence.
#pragma once

#include <string>
#include <string_view>

namespace bulkscore {

// `text` in double quotes for a message: at most `max_chars` bytes of it
// (then "..." and the full length; never a UTF-8 character cut in two),
// with quotes, backslashes and control characters escaped (\n, \t, \xHH),
// and so are bytes that are not UTF-8 (\xHH), the C1 controls U+0080..U+009F
// and the Unicode line separators and bidirectional controls (\uHHHH).
std::string quote_for_message(std::string_view text, size_t max_chars = 80);

// A map key or field name as one segment of a field path: appended to
// `path` as ".key" when it reads as one (at most 80 bytes of letters,
// digits, '-', '_', '.' and '/'), else as [quoted] (upstream's
// field.Path writes map keys in brackets too).
void append_path_key(std::string& path, std::string_view key);

// A name from the input (a test case's, an opcode) inside a message: as
// it is when it reads as one (the same rule as append_path_key), else
// quoted.
std::string name_for_message(std::string_view name);

// A whole message made safe for a terminal, for the last step before it is
// printed: the control characters that quote_for_message escapes are
// escaped, except line feeds and tabs; nothing is shortened or quoted, and
// text already quoted passes unchanged.
std::string escape_for_terminal(std::string_view message);

}  // namespace bulkscore
