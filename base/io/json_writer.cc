// JsonWriter implementation.
#include "base/io/json_writer.h"

#include <cmath>
#include <cstdio>
#include <cstdlib>

#include "base/status.h"

namespace ge::io {

void JsonWriter::BeforeValue() {
  if (stack_.empty()) return;
  Frame& f = stack_.back();
  if (f.object) {
    GE_CHECK_MSG(f.after_key, "JSON value without a key inside an object");
    f.after_key = false;
    return;
  }
  if (f.has_items) out_ += ',';
  f.has_items = true;
}

JsonWriter& JsonWriter::BeginObject() {
  BeforeValue();
  out_ += '{';
  stack_.push_back({true});
  return *this;
}

JsonWriter& JsonWriter::EndObject() {
  GE_CHECK(!stack_.empty() && stack_.back().object && !stack_.back().after_key);
  stack_.pop_back();
  out_ += '}';
  return *this;
}

JsonWriter& JsonWriter::BeginArray() {
  BeforeValue();
  out_ += '[';
  stack_.push_back({false});
  return *this;
}

JsonWriter& JsonWriter::EndArray() {
  GE_CHECK(!stack_.empty() && !stack_.back().object);
  stack_.pop_back();
  out_ += ']';
  return *this;
}

JsonWriter& JsonWriter::Key(std::string_view key) {
  GE_CHECK(!stack_.empty() && stack_.back().object && !stack_.back().after_key);
  Frame& f = stack_.back();
  if (f.has_items) out_ += ',';
  f.has_items = true;
  AppendEscaped(key);
  out_ += ':';
  f.after_key = true;
  return *this;
}

JsonWriter& JsonWriter::String(std::string_view value) {
  BeforeValue();
  AppendEscaped(value);
  return *this;
}

JsonWriter& JsonWriter::Int(int64_t value) {
  BeforeValue();
  out_ += std::to_string(value);
  return *this;
}

JsonWriter& JsonWriter::Double(double value) {
  BeforeValue();
  if (!std::isfinite(value)) {
    out_ += "null";
    return *this;
  }
  // The shortest of %.15g..%.17g that reads back as the same double.
  char buf[32];
  for (int precision = 15; precision <= 17; ++precision) {
    std::snprintf(buf, sizeof(buf), "%.*g", precision, value);
    if (std::strtod(buf, nullptr) == value) break;
  }
  out_ += buf;
  return *this;
}

JsonWriter& JsonWriter::Bool(bool value) {
  BeforeValue();
  out_ += value ? "true" : "false";
  return *this;
}

JsonWriter& JsonWriter::Null() {
  BeforeValue();
  out_ += "null";
  return *this;
}

void JsonWriter::AppendEscaped(std::string_view s) {
  out_ += '"';
  for (char c : s) {
    switch (c) {
      case '"': out_ += "\\\""; break;
      case '\\': out_ += "\\\\"; break;
      case '\n': out_ += "\\n"; break;
      case '\r': out_ += "\\r"; break;
      case '\t': out_ += "\\t"; break;
      default:
        if (static_cast<unsigned char>(c) < 0x20) {
          char buf[8];
          std::snprintf(buf, sizeof(buf), "\\u%04x", c);
          out_ += buf;
        } else {
          out_ += c;
        }
    }
  }
  out_ += '"';
}

}  // namespace ge::io
