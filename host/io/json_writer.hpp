// The one JSON writer (host only): a streaming writer of objects, arrays,
// strings with proper escaping, integers, doubles, booleans and null, compact
// (the CLI outputs, the cluster generator: large documents written once, in
// order) or indented (the scheduler_perf results file, indented with two
// spaces like upstream's).
//
// Doubles are written in their shortest round-trip form (std::to_chars), laid
// out as Go's encoding/json writes a float64: plain notation unless the
// magnitude is below 1e-6 or at least 1e21 ("1e-7", "1e+21"), "-0" for
// negative zero. JSON has no NaN or Infinity: writing one throws Error (as
// Go's encoding/json fails with UnsupportedValueError) rather than put a
// number in the file that nobody measured.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace bulkscore {

class JsonWriter {
 public:
  // `indent` > 0: each element on its own line, indented by `indent` spaces
  // per level, and ": " after keys; 0: compact.
  explicit JsonWriter(std::string& out, int indent = 0) : out_(out), indent_(indent) {}

  JsonWriter& begin_object() { return open('{'); }
  JsonWriter& end_object() { return close('}'); }
  JsonWriter& begin_array() { return open('['); }
  JsonWriter& end_array() { return close(']'); }

  // Emits `"name":`; the next call writes its value.
  JsonWriter& key(std::string_view name) {
    element_prefix();
    escape(out_, name);
    out_ += indent_ > 0 ? ": " : ":";
    after_key_ = true;
    return *this;
  }

  JsonWriter& value(std::string_view s) {
    element_prefix();
    escape(out_, s);
    return *this;
  }
  JsonWriter& value(const char* s) { return value(std::string_view(s)); }
  JsonWriter& value(const std::string& s) { return value(std::string_view(s)); }
  JsonWriter& value(int64_t v) {
    element_prefix();
    out_ += std::to_string(v);
    return *this;
  }
  JsonWriter& value(int32_t v) { return value(static_cast<int64_t>(v)); }
  JsonWriter& value(uint32_t v) { return value(static_cast<int64_t>(v)); }
  JsonWriter& value(uint64_t v) {
    element_prefix();
    out_ += std::to_string(v);
    return *this;
  }
  // Throws Error for NaN and infinities (see the top of this file).
  JsonWriter& value(double v) {
    element_prefix();
    append_number(out_, v);
    return *this;
  }
  JsonWriter& value(bool b) {
    element_prefix();
    out_ += b ? "true" : "false";
    return *this;
  }
  JsonWriter& null() {
    element_prefix();
    out_ += "null";
    return *this;
  }

  // Shorthands for `key(k).value(v)`.
  template <class T>
  JsonWriter& field(std::string_view k, const T& v) {
    key(k);
    return value(v);
  }
  JsonWriter& field_null(std::string_view k) {
    key(k);
    return null();
  }

  // Writes `s` as a quoted, escaped JSON string into `out`.
  static void escape(std::string& out, std::string_view s);
  // Writes `v` as a JSON number into `out` (the format at the top of this
  // file). Throws Error for NaN and infinities.
  static void append_number(std::string& out, double v);

 private:
  JsonWriter& open(char c) {
    element_prefix();
    out_ += c;
    empty_.push_back(true);
    return *this;
  }
  JsonWriter& close(char c) {
    const bool was_empty = empty_.back();
    empty_.pop_back();
    if (!was_empty) newline();
    out_ += c;
    return *this;
  }
  // Before an element of the enclosing container: the comma, and in indented
  // mode the line break. A value right after its key gets neither.
  void element_prefix() {
    if (after_key_) {
      after_key_ = false;
      return;
    }
    if (empty_.empty()) return;
    if (!empty_.back()) out_ += ',';
    empty_.back() = false;
    newline();
  }
  void newline() {
    if (indent_ <= 0) return;
    out_ += '\n';
    out_.append(empty_.size() * static_cast<size_t>(indent_), ' ');
  }

  std::string& out_;
  int indent_;
  std::vector<bool> empty_;  // per open container: no element written yet
  bool after_key_ = false;
};

// The shortest decimal digits that read back as `v` (finite, not zero), with
// trailing zeros removed, and the decimal exponent of the first digit:
// |v| = 0.d1d2d3... * 10^(exp10 + 1). Shared by the JSON writer and the Go
// template printer (bench/perf), which lay the digits out differently.
void shortest_decimal_digits(double v, std::string& digits, int& exp10);

// Lays out `digits` (as from shortest_decimal_digits) in plain notation, e.g.
// "12.5", "0.001", "1200".
std::string plain_decimal(const std::string& digits, int exp10);

inline void JsonWriter::escape(std::string& out, std::string_view s) {
  static const char* hex = "0123456789abcdef";
  out += '"';
  size_t run = 0;  // plain characters are appended in runs, not one by one
  for (size_t i = 0; i < s.size(); ++i) {
    const auto c = static_cast<unsigned char>(s[i]);
    if (c >= 0x20 && c != '"' && c != '\\') continue;
    out.append(s.data() + run, i - run);
    run = i + 1;
    switch (c) {
      case '"':
        out += "\\\"";
        break;
      case '\\':
        out += "\\\\";
        break;
      case '\n':
        out += "\\n";
        break;
      case '\r':
        out += "\\r";
        break;
      case '\t':
        out += "\\t";
        break;
      default:
        out += "\\u00";
        out += hex[c >> 4];
        out += hex[c & 15];
    }
  }
  out.append(s.data() + run, s.size() - run);
  out += '"';
}

}  // namespace bulkscore
