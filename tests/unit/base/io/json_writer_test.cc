// JsonWriter output and escaping.
#include "base/io/json_writer.h"

#include <cmath>

#include "gtest/gtest.h"

namespace ge::io {
namespace {

TEST(JsonWriterTest, WritesNestedValues) {
  JsonWriter w;
  w.BeginObject().Key("a").Int(1).Key("b").BeginArray().String("x").Bool(true).Null().Double(0.5).EndArray();
  w.Key("c").BeginObject().EndObject().EndObject();
  EXPECT_EQ(w.str(), R"({"a":1,"b":["x",true,null,0.5],"c":{}})");
}

TEST(JsonWriterTest, DoublesAreShortestRoundTrip) {
  JsonWriter w;
  w.BeginArray().Double(173.9317315).Double(0.1).Double(1.0 / 3).EndArray();
  EXPECT_EQ(w.str(), "[173.9317315,0.1,0.3333333333333333]");
}

TEST(JsonWriterTest, EscapesStringsAndNonFiniteNumbers) {
  JsonWriter w;
  w.BeginArray().String("q\"b\\n\n\x01").Double(std::nan("")).Double(INFINITY).EndArray();
  EXPECT_EQ(w.str(), R"(["q\"b\\n\n\u0001",null,null])");
}

}  // namespace
}  // namespace ge::io
