// A small streaming JSON writer (host only): objects, arrays, strings with
// proper escaping, integers, booleans, null. Used for the CLI outputs and the
// cluster generator, where documents are large and written once, in order.
#pragma once

#include <cstdint>
#include <cstdio>
#include <string>
#include <string_view>
#include <vector>

namespace bulkscore {

class JsonWriter {
 public:
  explicit JsonWriter(std::string& out) : out_(out) {}

  JsonWriter& begin_object() {
    value_prefix();
    out_ += '{';
    stack_.push_back(true);
    return *this;
  }
  JsonWriter& end_object() {
    out_ += '}';
    stack_.pop_back();
    return *this;
  }
  JsonWriter& begin_array() {
    value_prefix();
    out_ += '[';
    stack_.push_back(true);
    return *this;
  }
  JsonWriter& end_array() {
    out_ += ']';
    stack_.pop_back();
    return *this;
  }

  // Emits `"name":`; the next call writes its value.
  JsonWriter& key(std::string_view name) {
    comma();
    append_string(name);
    out_ += ':';
    after_key_ = true;
    return *this;
  }

  JsonWriter& value(std::string_view s) {
    value_prefix();
    append_string(s);
    return *this;
  }
  JsonWriter& value(const char* s) { return value(std::string_view(s)); }
  JsonWriter& value(const std::string& s) { return value(std::string_view(s)); }
  JsonWriter& value(int64_t v) {
    value_prefix();
    out_ += std::to_string(v);
    return *this;
  }
  JsonWriter& value(int32_t v) { return value(static_cast<int64_t>(v)); }
  JsonWriter& value(uint32_t v) { return value(static_cast<int64_t>(v)); }
  JsonWriter& value(uint64_t v) {
    value_prefix();
    out_ += std::to_string(v);
    return *this;
  }
  JsonWriter& value(double v);
  JsonWriter& value(bool b) {
    value_prefix();
    out_ += b ? "true" : "false";
    return *this;
  }
  JsonWriter& null() {
    value_prefix();
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

 private:
  void comma() {
    if (!stack_.empty()) {
      if (!stack_.back()) out_ += ',';
      stack_.back() = false;
    }
  }
  void value_prefix() {
    if (after_key_) {
      after_key_ = false;
      return;
    }
    comma();
  }
  void append_string(std::string_view s) { escape(out_, s); }

  std::string& out_;
  std::vector<bool> stack_;  // per open container: "no element written yet"
  bool after_key_ = false;
};

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

inline JsonWriter& JsonWriter::value(double v) {
  value_prefix();
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.17g", v);
  out_ += buf;
  return *this;
}

}  // namespace bulkscore
