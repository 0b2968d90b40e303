#include "host/input/quote.hpp"

#include <cstdint>

namespace bulkscore {
namespace {

constexpr char kHex[] = "0123456789abcdef";

void append_hex_byte(std::string& out, unsigned char c) {
  out += "\\x";
  out += kHex[c >> 4];
  out += kHex[c & 0xf];
}

// The UTF-8 sequence at `s[i]`: its length, or 0 when it is not one
// (a stray continuation byte, an overlong form, a surrogate, past U+10FFFF
// or cut short).
size_t utf8_length(std::string_view s, size_t i, uint32_t& cp) {
  const auto b0 = static_cast<unsigned char>(s[i]);
  size_t n = 0;
  uint32_t min = 0;
  if (b0 < 0x80) {
    cp = b0;
    return 1;
  }
  if ((b0 & 0xe0) == 0xc0) {
    n = 2;
    cp = b0 & 0x1fu;
    min = 0x80;
  } else if ((b0 & 0xf0) == 0xe0) {
    n = 3;
    cp = b0 & 0x0fu;
    min = 0x800;
  } else if ((b0 & 0xf8) == 0xf0) {
    n = 4;
    cp = b0 & 0x07u;
    min = 0x10000;
  } else {
    return 0;
  }
  if (i + n > s.size()) return 0;
  for (size_t k = 1; k < n; ++k) {
    const auto b = static_cast<unsigned char>(s[i + k]);
    if ((b & 0xc0) != 0x80) return 0;
    cp = (cp << 6) | (b & 0x3fu);
  }
  if (cp < min || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff)) return 0;
  return n;
}

// Code points a terminal or an editor acts on rather than shows: the C1
// controls (U+009B is an 8-bit CSI), the line and paragraph separators and
// the bidirectional marks, embeddings, overrides and isolates.
bool is_invisible_control(uint32_t cp) {
  return (cp >= 0x80 && cp <= 0x9f) || cp == 0x61c || cp == 0x200e || cp == 0x200f || cp == 0x2028 || cp == 0x2029 ||
         (cp >= 0x202a && cp <= 0x202e) || (cp >= 0x2066 && cp <= 0x2069);
}

// Appends s[i..] escaped, one character; returns the bytes consumed.
// `quoting`: quotes and backslashes escaped too, line feeds and tabs as
// \n and \t; otherwise those four pass.
size_t append_escaped(std::string& out, std::string_view s, size_t i, bool quoting) {
  uint32_t cp = 0;
  const size_t n = utf8_length(s, i, cp);
  if (n == 0) {
    append_hex_byte(out, static_cast<unsigned char>(s[i]));
    return 1;
  }
  if (n > 1) {
    if (is_invisible_control(cp)) {
      out += "\\u";
      for (int shift = 12; shift >= 0; shift -= 4) out += kHex[(cp >> shift) & 0xf];
    } else {
      out.append(s.data() + i, n);
    }
    return n;
  }
  const auto c = static_cast<unsigned char>(s[i]);
  switch (c) {
    case '"':
      out += quoting ? "\\\"" : "\"";
      return 1;
    case '\\':
      out += quoting ? "\\\\" : "\\";
      return 1;
    case '\n':
      out += quoting ? "\\n" : "\n";
      return 1;
    case '\t':
      out += quoting ? "\\t" : "\t";
      return 1;
    case '\r':
      out += "\\r";
      return 1;
    default:
      if (c < 0x20 || c == 0x7f)
        append_hex_byte(out, c);
      else
        out += static_cast<char>(c);
      return 1;
  }
}

bool is_plain_key_char(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' || c == '_' ||
         c == '.' || c == '/';
}

// Letters, digits, '-', '_', '.' and '/', at most 80 bytes: shown as is.
bool is_plain_name(std::string_view s) {
  if (s.empty() || s.size() > 80) return false;
  for (char c : s)
    if (!is_plain_key_char(c)) return false;
  return true;
}

}  // namespace

std::string quote_for_message(std::string_view text, size_t max_chars) {
  std::string out = "\"";
  size_t i = 0;
  while (i < text.size()) {
    uint32_t cp = 0;
    const size_t n = utf8_length(text, i, cp);
    if (i + (n == 0 ? 1 : n) > max_chars) break;  // a character is kept whole or left out
    i += append_escaped(out, text, i, true);
  }
  out += '"';
  if (i < text.size()) out += "... (" + std::to_string(text.size()) + " bytes)";
  return out;
}

std::string name_for_message(std::string_view name) {
  return is_plain_name(name) ? std::string(name) : quote_for_message(name);
}

void append_path_key(std::string& path, std::string_view key) {
  if (is_plain_name(key)) {
    if (!path.empty()) path += '.';
    path.append(key.data(), key.size());
  } else {
    path += '[';
    path += quote_for_message(key);
    path += ']';
  }
}

std::string escape_for_terminal(std::string_view message) {
  std::string out;
  out.reserve(message.size());
  for (size_t i = 0; i < message.size();) i += append_escaped(out, message, i, false);
  return out;
}

}  // namespace bulkscore
