// JsonWriter: a small streaming JSON writer for reports and tool output.
//
// Produces compact, valid JSON (UTF-8 passed through, control characters
// escaped). Misuse (a value where a key is expected) is a programmer error.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace ge::io {

class JsonWriter {
 public:
  JsonWriter& BeginObject();
  JsonWriter& EndObject();
  JsonWriter& BeginArray();
  JsonWriter& EndArray();
  JsonWriter& Key(std::string_view key);
  JsonWriter& String(std::string_view value);
  JsonWriter& Int(int64_t value);
  JsonWriter& Double(double value);  // NaN and infinities become null
  JsonWriter& Bool(bool value);
  JsonWriter& Null();

  const std::string& str() const { return out_; }

 private:
  void BeforeValue();
  void AppendEscaped(std::string_view s);

  std::string out_;
  // Per open container: whether a value was written (to place commas), and
  // for objects whether a key is pending.
  struct Frame {
    bool object;
    bool has_items = false;
    bool after_key = false;
  };
  std::vector<Frame> stack_;
};

}  // namespace ge::io
