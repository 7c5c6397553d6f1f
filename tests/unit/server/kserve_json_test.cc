// The KServe v2 HTTP/JSON codec (server/kserve_json.h): typed JSON data,
// flat and nested, every datatype; the binary-data extension both ways;
// and each bound — JSON depth and element count, a header length beyond
// the body, shape x element size overflow, binary_data_size sums that
// disagree with the body — refused with a message naming what is wrong.
#include "server/kserve_json.h"

#include <cstring>
#include <limits>

#include "gtest/gtest.h"

namespace ge::server {
namespace {

using serving::InferRequest;
using serving::InferResult;
using serving::NamedTensor;

JsonLimits Limits() {
  JsonLimits l;
  l.max_elements = 1000;
  l.max_tensor_bytes = 1 << 20;
  return l;
}

absl::Status Decode(const std::string& body, HttpInferRequest* out, std::optional<size_t> header = std::nullopt) {
  return DecodeHttpInferRequest(body, header, Limits(), out);
}

void ExpectError(const absl::Status& s, absl::StatusCode code, const std::string& words) {
  EXPECT_EQ(s.code(), code) << s;
  EXPECT_NE(s.message().find(words), std::string::npos) << "'" << words << "' not in: " << s.message();
}

Tensor FloatTensor(std::vector<float> values, std::vector<int64_t> dims) {
  Tensor t = *Tensor::Allocate(DataType::kFloat, Shape(absl::Span<const int64_t>(dims)));
  std::memcpy(t.raw_data(), values.data(), values.size() * sizeof(float));
  return t;
}

TEST(KServeJsonTest, FlatAndNestedDataDecodeToTheSameTensor) {
  HttpInferRequest flat, nested;
  ASSERT_TRUE(
      Decode(R"({"id":"r1","inputs":[{"name":"a","datatype":"FP32","shape":[2,2],"data":[1,2.5,-3,4]}]})", &flat).ok());
  ASSERT_TRUE(
      Decode(R"({"inputs":[{"name":"a","datatype":"FP32","shape":[2,2],"data":[[1,2.5],[-3,4]]}]})", &nested).ok());
  EXPECT_EQ(flat.request.id, "r1");
  for (const HttpInferRequest* r : {&flat, &nested}) {
    ASSERT_EQ(r->request.inputs.size(), 1u);
    const Tensor& t = r->request.inputs[0].tensor;
    EXPECT_EQ(t.shape().dims(), (Shape::Dims{2, 2}));
    EXPECT_EQ(t.data<float>()[1], 2.5f);
    EXPECT_EQ(t.data<float>()[2], -3.0f);
  }
}

TEST(KServeJsonTest, EveryDatatypeFromJson) {
  HttpInferRequest r;
  ASSERT_TRUE(Decode(R"({"inputs":[
      {"name":"b","datatype":"BOOL","shape":[2],"data":[true,false]},
      {"name":"i8","datatype":"INT8","shape":[2],"data":[-128,127]},
      {"name":"u64","datatype":"UINT64","shape":[1],"data":[18446744073709551615]},
      {"name":"i64","datatype":"INT64","shape":[1],"data":[-9223372036854775808]},
      {"name":"h","datatype":"FP16","shape":[1],"data":[1.5]},
      {"name":"bf","datatype":"BF16","shape":[1],"data":[2]},
      {"name":"d","datatype":"FP64","shape":[1],"data":[0.1]},
      {"name":"s","datatype":"BYTES","shape":[2],"data":["x","h\u00e9"]}]})",
                     &r)
                  .ok());
  const auto& in = r.request.inputs;
  ASSERT_EQ(in.size(), 8u);
  EXPECT_TRUE(in[0].tensor.data<bool>()[0]);
  EXPECT_EQ(in[1].tensor.data<int8_t>()[0], -128);
  EXPECT_EQ(in[2].tensor.data<uint64_t>()[0], std::numeric_limits<uint64_t>::max());
  EXPECT_EQ(in[3].tensor.data<int64_t>()[0], std::numeric_limits<int64_t>::min());
  EXPECT_EQ(static_cast<float>(in[4].tensor.data<Float16>()[0]), 1.5f);
  EXPECT_EQ(static_cast<float>(in[5].tensor.data<BFloat16>()[0]), 2.0f);
  EXPECT_EQ(in[6].tensor.data<double>()[0], 0.1);
  EXPECT_EQ(in[7].tensor.data<std::string>()[1], "h\xc3\xa9");
}

TEST(KServeJsonTest, TypedDataIsChecked) {
  HttpInferRequest r;
  ExpectError(Decode(R"({"inputs":[{"name":"a","datatype":"INT8","shape":[1],"data":[128]}]})", &r),
              absl::StatusCode::kInvalidArgument, "does not fit");
  ExpectError(Decode(R"({"inputs":[{"name":"a","datatype":"UINT8","shape":[1],"data":[-1]}]})", &r),
              absl::StatusCode::kInvalidArgument, "does not fit");
  ExpectError(Decode(R"({"inputs":[{"name":"a","datatype":"INT32","shape":[1],"data":[1.5]}]})", &r),
              absl::StatusCode::kInvalidArgument, "must be an integer");
  ExpectError(Decode(R"({"inputs":[{"name":"a","datatype":"BOOL","shape":[1],"data":[1]}]})", &r),
              absl::StatusCode::kInvalidArgument, "true or false");
  ExpectError(Decode(R"({"inputs":[{"name":"a","datatype":"BYTES","shape":[1],"data":[1]}]})", &r),
              absl::StatusCode::kInvalidArgument, "must be a string");
  ExpectError(Decode(R"({"inputs":[{"name":"a","datatype":"FP32","shape":[3],"data":[1,2]}]})", &r),
              absl::StatusCode::kInvalidArgument, "holds 2 elements, the shape needs 3");
  ExpectError(Decode(R"({"inputs":[{"name":"a","datatype":"FP32","shape":[2,2],"data":[[1,2],[3]]}]})", &r),
              absl::StatusCode::kInvalidArgument, "does not match the shape at dim 1");
  ExpectError(Decode(R"({"inputs":[{"name":"a","datatype":"FP32","shape":[2],"data":[[1],[2]]}]})", &r),
              absl::StatusCode::kInvalidArgument, "nests deeper");
  ExpectError(Decode(R"({"inputs":[{"name":"a","datatype":"FLOAT","shape":[1],"data":[1]}]})", &r),
              absl::StatusCode::kInvalidArgument, "unknown datatype 'FLOAT'");
  ExpectError(Decode(R"({"inputs":[{"name":"a","datatype":"FP32","shape":[-1],"data":[]}]})", &r),
              absl::StatusCode::kInvalidArgument, "negative");
  ExpectError(Decode(R"({"inputs":[{"name":"a","datatype":"FP32","shape":[1]}]})", &r),
              absl::StatusCode::kInvalidArgument, "no 'data'");
  ExpectError(Decode(R"({"inputs":[{"datatype":"FP32","shape":[1],"data":[1]}]})", &r),
              absl::StatusCode::kInvalidArgument, "'name' is missing");
  ExpectError(Decode(R"({"inputs":{}})", &r), absl::StatusCode::kInvalidArgument, "'inputs' must be an array");
  ExpectError(Decode(R"([1,2])", &r), absl::StatusCode::kInvalidArgument, "must be an object");
  ExpectError(Decode(R"({"inputs":[)", &r), absl::StatusCode::kInvalidArgument, "not valid JSON");
  ExpectError(Decode(R"({"inputs":[],"outputs":[{"name":"y","parameters":{"classification":2}}]})", &r),
              absl::StatusCode::kInvalidArgument, "classification");
}

TEST(KServeJsonTest, JsonBombsStopAtTheLimits) {
  HttpInferRequest r;
  // Deeper than 64 levels: refused while parsing, whatever the element count.
  std::string deep = R"({"inputs":[{"name":"a","datatype":"FP32","shape":[1],"data":)";
  deep += std::string(100000, '[') + "1" + std::string(100000, ']') + "}]}";
  ExpectError(Decode(deep, &r), absl::StatusCode::kInvalidArgument, "deeper than 64 levels");
  // More elements than max_json_elements.
  std::string wide = R"({"inputs":[{"name":"a","datatype":"FP32","shape":[5000],"data":[0)";
  for (int i = 1; i < 5000; ++i) wide += ",0";
  wide += "]}]}";
  ExpectError(Decode(wide, &r), absl::StatusCode::kResourceExhausted, "max_json_elements (1000)");
}

TEST(KServeJsonTest, ShapeTimesElementSizeIsBoundedBeforeAllocation) {
  HttpInferRequest r;
  ExpectError(
      Decode(R"({"inputs":[{"name":"a","datatype":"FP32","shape":[1099511627776,1099511627776],"data":[]}]})", &r),
      absl::StatusCode::kResourceExhausted, "max_tensor_bytes");
  ExpectError(Decode(R"({"inputs":[{"name":"a","datatype":"FP64","shape":[262144],"data":[]}]})", &r),
              absl::StatusCode::kResourceExhausted, "max_tensor_bytes (1048576)");
  ExpectError(Decode(R"({"inputs":[{"name":"a","datatype":"FP32","shape":[1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1],
              "data":[1]}]})",
                     &r),
              absl::StatusCode::kInvalidArgument, "rank 17");
}

TEST(KServeJsonTest, BinaryInputsFollowTheJson) {
  const std::string json =
      R"({"inputs":[{"name":"a","datatype":"FP32","shape":[2],"parameters":{"binary_data_size":8}},)"
      R"({"name":"s","datatype":"BYTES","shape":[2],"parameters":{"binary_data_size":11}},)"
      R"({"name":"c","datatype":"INT64","shape":[1],"data":[7]}],)"
      R"("outputs":[{"name":"y","parameters":{"binary_data":true}},{"name":"z"}]})";
  const float a[2] = {1.25f, -2.0f};
  std::string body = json;
  body.append(reinterpret_cast<const char*>(a), 8);
  body.append(
      std::string("\x03\x00\x00\x00"
                  "abc"
                  "\x00\x00\x00\x00",
                  11));
  HttpInferRequest r;
  ASSERT_TRUE(Decode(body, &r, json.size()).ok());
  ASSERT_EQ(r.request.inputs.size(), 3u);
  EXPECT_EQ(r.request.inputs[0].tensor.data<float>()[1], -2.0f);
  EXPECT_EQ(r.request.inputs[1].tensor.data<std::string>()[0], "abc");
  EXPECT_EQ(r.request.inputs[1].tensor.data<std::string>()[1], "");
  EXPECT_EQ(r.request.inputs[2].tensor.data<int64_t>()[0], 7);
  EXPECT_EQ(r.request.outputs, (std::vector<std::string>{"y", "z"}));
  EXPECT_TRUE(r.forms.Binary("y"));
  EXPECT_FALSE(r.forms.Binary("z"));
}

TEST(KServeJsonTest, BinarySizesMustAgreeWithTheBody) {
  const std::string json =
      R"({"inputs":[{"name":"a","datatype":"FP32","shape":[2],"parameters":{"binary_data_size":8}}]})";
  HttpInferRequest r;
  // Header length beyond the body.
  auto length = ParseHeaderLength({"100000"}, json.size());
  ExpectError(length.status(), absl::StatusCode::kInvalidArgument, "beyond the body");
  ExpectError(ParseHeaderLength({"12x"}, 100).status(), absl::StatusCode::kInvalidArgument, "not a byte count");
  ExpectError(ParseHeaderLength({"1", "2"}, 100).status(), absl::StatusCode::kInvalidArgument, "twice");
  ExpectError(Decode(json, &r, json.size() + 1), absl::StatusCode::kInvalidArgument, "beyond the body");
  // binary_data_size past the body's end.
  ExpectError(Decode(json + std::string(4, '\0'), &r, json.size()), absl::StatusCode::kInvalidArgument,
              "runs past the body");
  // Bytes left over after every binary tensor.
  ExpectError(Decode(json + std::string(12, '\0'), &r, json.size()), absl::StatusCode::kInvalidArgument,
              "sum to 8 bytes, the body carries 12");
  // A size that disagrees with shape x datatype.
  const std::string odd =
      R"({"inputs":[{"name":"a","datatype":"FP32","shape":[2],"parameters":{"binary_data_size":12}}]})";
  ExpectError(Decode(odd + std::string(12, '\0'), &r, odd.size()), absl::StatusCode::kInvalidArgument,
              "holds 12 bytes, the shape and datatype need 8");
  // Both data and binary_data_size.
  const std::string both =
      R"({"inputs":[{"name":"a","datatype":"FP32","shape":[1],"data":[1],"parameters":{"binary_data_size":4}}]})";
  ExpectError(Decode(both + std::string(4, '\0'), &r, both.size()), absl::StatusCode::kInvalidArgument,
              "one form only");
  // A BYTES element whose length runs past its tensor's bytes.
  const std::string str =
      R"({"inputs":[{"name":"s","datatype":"BYTES","shape":[1],"parameters":{"binary_data_size":6}}]})";
  ExpectError(Decode(str + std::string("\xff\xff\x00\x00"
                                       "ab",
                                       6),
                     &r, str.size()),
              absl::StatusCode::kInvalidArgument, "claims");
  // A huge BYTES count with a few bytes: refused before the strings are made.
  const std::string many =
      R"({"inputs":[{"name":"s","datatype":"BYTES","shape":[1000000],"parameters":{"binary_data_size":4}}]})";
  ExpectError(Decode(many + std::string(4, '\0'), &r, many.size()), absl::StatusCode::kInvalidArgument, "too small");
}

TEST(KServeJsonTest, ResultsRoundTripInJsonAndBinary) {
  InferResult result;
  result.model = "m";
  result.version = "3";
  result.id = "req";
  result.outputs.push_back({"y", FloatTensor({1.5f, -2.0f, 3.0f, 0.25f}, {2, 2})});
  Tensor s = *Tensor::Allocate(DataType::kString, Shape(absl::Span<const int64_t>(std::vector<int64_t>{2})));
  s.data<std::string>()[0] = "ab";
  s.data<std::string>()[1] = std::string("\0z", 2);
  result.outputs.push_back({"s", std::move(s)});
  for (bool binary : {false, true}) {
    OutputForms forms;
    forms.binary_default = binary;
    HttpBody body = EncodeHttpInferResult(result, forms);
    EXPECT_EQ(body.header_length.has_value(), binary);
    if (!binary) {
      EXPECT_NE(body.body.find(R"("data":[1.5,-2.0,3.0,0.25])"), std::string::npos) << body.body;
      EXPECT_NE(body.body.find(R"("shape":[2,2])"), std::string::npos) << body.body;
    }
    InferResult back;
    ASSERT_TRUE(DecodeHttpInferResult(body.body, body.header_length, Limits(), &back).ok());
    EXPECT_EQ(back.model, "m");
    EXPECT_EQ(back.version, "3");
    EXPECT_EQ(back.id, "req");
    ASSERT_EQ(back.outputs.size(), 2u);
    EXPECT_EQ(back.outputs[0].tensor.data<float>()[3], 0.25f);
    EXPECT_EQ(back.outputs[1].tensor.data<std::string>()[1], std::string("\0z", 2));
  }
}

TEST(KServeJsonTest, ClientRequestsDecodeOnTheServerSide) {
  InferRequest request;
  request.id = "7";
  request.inputs.push_back({"a", FloatTensor({1, 2, 3}, {3})});
  request.outputs = {"y"};
  OutputForms forms;
  forms.binary["y"] = true;
  for (bool binary : {false, true}) {
    HttpBody body = EncodeHttpInferRequest(request, binary, forms);
    HttpInferRequest decoded;
    ASSERT_TRUE(Decode(body.body, &decoded, body.header_length).ok()) << body.body;
    EXPECT_EQ(decoded.request.id, "7");
    ASSERT_EQ(decoded.request.inputs.size(), 1u);
    EXPECT_EQ(decoded.request.inputs[0].tensor.data<float>()[2], 3.0f);
    EXPECT_EQ(decoded.request.outputs, (std::vector<std::string>{"y"}));
    EXPECT_TRUE(decoded.forms.Binary("y"));
  }
}

TEST(KServeJsonTest, StatusCodesMapToHttp) {
  EXPECT_EQ(HttpStatusOf(absl::StatusCode::kInvalidArgument), 400);
  EXPECT_EQ(HttpStatusOf(absl::StatusCode::kUnauthenticated), 401);
  EXPECT_EQ(HttpStatusOf(absl::StatusCode::kPermissionDenied), 403);
  EXPECT_EQ(HttpStatusOf(absl::StatusCode::kNotFound), 404);
  EXPECT_EQ(HttpStatusOf(absl::StatusCode::kResourceExhausted), 429);
  EXPECT_EQ(HttpStatusOf(absl::StatusCode::kUnavailable), 503);
  EXPECT_EQ(HttpStatusOf(absl::StatusCode::kFailedPrecondition), 400);
  EXPECT_EQ(HttpStatusOf(absl::StatusCode::kDeadlineExceeded), 504);
  EXPECT_EQ(HttpStatusOf(absl::StatusCode::kInternal), 500);
  EXPECT_EQ(JsonError("bad \"x\""), R"({"error":"bad \"x\""})");
}

}  // namespace
}  // namespace ge::server
