// TensorProto <-> Tensor for every dtype and both encodings, and TypeProto
// -> ValueType.
#include "compiler/frontend/onnx_tensor.h"

#include <cstring>
#include <limits>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/testing/onnx_builder.h"

namespace ge::frontend {
namespace {

using ::testing::HasSubstr;

onnx::TensorProto Proto(int32_t dtype, std::vector<int64_t> dims, std::string name = "t") {
  onnx::TensorProto p;
  p.set_name(std::move(name));
  p.set_data_type(dtype);
  for (int64_t d : dims) p.add_dims(d);
  return p;
}

TEST(OnnxTensorTest, FloatFromTypedAndRawData) {
  onnx::TensorProto typed = Proto(onnx::TensorProto::FLOAT, {2, 2});
  for (float v : {1.f, 2.f, 3.f, -4.5f}) typed.add_float_data(v);
  auto t = TensorFromProto(typed);
  ASSERT_TRUE(t.ok()) << t.status();
  EXPECT_EQ(t->dtype(), DataType::kFloat);
  EXPECT_EQ(t->shape(), (Shape{2, 2}));
  EXPECT_FLOAT_EQ(t->data<float>()[3], -4.5f);

  onnx::TensorProto raw = TensorToProto(*t, "t");
  EXPECT_TRUE(raw.has_raw_data());
  auto back = TensorFromProto(raw);
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_TRUE(TensorsEqual(*t, *back));
}

TEST(OnnxTensorTest, Int32DataPackingsForSmallTypes) {
  struct Case {
    int32_t onnx_type;
    std::vector<int32_t> values;
  };
  const Case cases[] = {
      {onnx::TensorProto::INT8, {-128, 0, 127}},  {onnx::TensorProto::INT16, {-300, 0, 300}},
      {onnx::TensorProto::INT32, {-70000, 1, 7}}, {onnx::TensorProto::UINT8, {0, 128, 255}},
      {onnx::TensorProto::UINT16, {0, 1, 65535}}, {onnx::TensorProto::BOOL, {0, 1, 1}},
  };
  for (const Case& c : cases) {
    onnx::TensorProto p = Proto(c.onnx_type, {3});
    for (int32_t v : c.values) p.add_int32_data(v);
    auto t = TensorFromProto(p);
    ASSERT_TRUE(t.ok()) << c.onnx_type << ": " << t.status();
    EXPECT_EQ(static_cast<int32_t>(t->dtype()), c.onnx_type);
    for (int i = 0; i < 3; ++i) EXPECT_EQ(t->GetAsInt64(i), c.values[i]) << c.onnx_type;
    // Raw round trip.
    auto back = TensorFromProto(TensorToProto(*t, "t"));
    ASSERT_TRUE(back.ok()) << back.status();
    EXPECT_TRUE(TensorsEqual(*t, *back));
  }
}

TEST(OnnxTensorTest, Int32DataOutOfRangeIsAnError) {
  onnx::TensorProto p = Proto(onnx::TensorProto::INT8, {1}, "w8");
  p.add_int32_data(300);
  auto t = TensorFromProto(p, "initializer");
  ASSERT_FALSE(t.ok());
  EXPECT_THAT(std::string(t.status().message()), HasSubstr("initializer 'w8'"));
  EXPECT_THAT(std::string(t.status().message()), HasSubstr("300"));
}

TEST(OnnxTensorTest, HalfAndBFloat16BitPatterns) {
  onnx::TensorProto half = Proto(onnx::TensorProto::FLOAT16, {2});
  half.add_int32_data(0x3c00);  // 1.0
  half.add_int32_data(0xc000);  // -2.0
  auto h = TensorFromProto(half);
  ASSERT_TRUE(h.ok()) << h.status();
  EXPECT_FLOAT_EQ(h->GetAsDouble(0), 1.0);
  EXPECT_FLOAT_EQ(h->GetAsDouble(1), -2.0);

  onnx::TensorProto bf = Proto(onnx::TensorProto::BFLOAT16, {1});
  bf.add_int32_data(0x3f80);  // 1.0
  auto b = TensorFromProto(bf);
  ASSERT_TRUE(b.ok()) << b.status();
  EXPECT_FLOAT_EQ(b->GetAsDouble(0), 1.0);

  onnx::TensorProto bad = Proto(onnx::TensorProto::FLOAT16, {1});
  bad.add_int32_data(0x10000);
  EXPECT_FALSE(TensorFromProto(bad).ok());

  // Raw form.
  auto raw = TensorFromProto(TensorToProto(*h, "h"));
  ASSERT_TRUE(raw.ok());
  EXPECT_TRUE(TensorsEqual(*h, *raw));
}

TEST(OnnxTensorTest, Int64Uint32Uint64DoubleFields) {
  onnx::TensorProto i64 = Proto(onnx::TensorProto::INT64, {2});
  i64.add_int64_data(std::numeric_limits<int64_t>::min());
  i64.add_int64_data(42);
  auto a = TensorFromProto(i64);
  ASSERT_TRUE(a.ok());
  EXPECT_EQ(a->data<int64_t>()[0], std::numeric_limits<int64_t>::min());

  onnx::TensorProto u32 = Proto(onnx::TensorProto::UINT32, {1});
  u32.add_uint64_data(4000000000u);
  auto b = TensorFromProto(u32);
  ASSERT_TRUE(b.ok());
  EXPECT_EQ(b->data<uint32_t>()[0], 4000000000u);
  onnx::TensorProto u32_bad = Proto(onnx::TensorProto::UINT32, {1});
  u32_bad.add_uint64_data(uint64_t{1} << 40);
  EXPECT_FALSE(TensorFromProto(u32_bad).ok());

  onnx::TensorProto u64 = Proto(onnx::TensorProto::UINT64, {1});
  u64.add_uint64_data(std::numeric_limits<uint64_t>::max());
  auto c = TensorFromProto(u64);
  ASSERT_TRUE(c.ok());
  EXPECT_EQ(c->data<uint64_t>()[0], std::numeric_limits<uint64_t>::max());

  onnx::TensorProto f64 = Proto(onnx::TensorProto::DOUBLE, {1});
  f64.add_double_data(0.1);
  auto d = TensorFromProto(f64);
  ASSERT_TRUE(d.ok());
  EXPECT_DOUBLE_EQ(d->data<double>()[0], 0.1);
  for (const Tensor* t : {&*a, &*b, &*c, &*d}) {
    auto back = TensorFromProto(TensorToProto(*t, "x"));
    ASSERT_TRUE(back.ok());
    EXPECT_TRUE(TensorsEqual(*t, *back));
  }
}

TEST(OnnxTensorTest, ComplexTakesTwoValuesPerElement) {
  onnx::TensorProto c64 = Proto(onnx::TensorProto::COMPLEX64, {2});
  for (float v : {1.f, 2.f, 3.f, 4.f}) c64.add_float_data(v);
  auto a = TensorFromProto(c64);
  ASSERT_TRUE(a.ok()) << a.status();
  EXPECT_EQ(a->SizeInBytes(), 16u);
  EXPECT_FLOAT_EQ(a->data<float>()[3], 4.f);

  onnx::TensorProto c128 = Proto(onnx::TensorProto::COMPLEX128, {1});
  c128.add_double_data(1.0);
  auto short_data = TensorFromProto(c128);
  ASSERT_FALSE(short_data.ok());
  c128.add_double_data(-1.0);
  auto b = TensorFromProto(c128);
  ASSERT_TRUE(b.ok()) << b.status();
  EXPECT_DOUBLE_EQ(b->data<double>()[1], -1.0);
}

TEST(OnnxTensorTest, Strings) {
  onnx::TensorProto s = Proto(onnx::TensorProto::STRING, {2});
  s.add_string_data("hello");
  s.add_string_data(std::string("a\0b", 3));
  auto t = TensorFromProto(s);
  ASSERT_TRUE(t.ok()) << t.status();
  EXPECT_EQ(t->data<std::string>()[1], std::string("a\0b", 3));
  onnx::TensorProto back = TensorToProto(*t, "s");
  EXPECT_EQ(back.string_data_size(), 2);
  EXPECT_FALSE(back.has_raw_data());

  onnx::TensorProto raw_strings = Proto(onnx::TensorProto::STRING, {1});
  raw_strings.set_raw_data("x");
  EXPECT_FALSE(TensorFromProto(raw_strings).ok());
}

TEST(OnnxTensorTest, SizeMismatchNamesTheTensor) {
  onnx::TensorProto p = Proto(onnx::TensorProto::FLOAT, {2, 3}, "conv1.weight");
  p.add_float_data(1.f);
  auto t = TensorFromProto(p, "initializer");
  ASSERT_FALSE(t.ok());
  EXPECT_EQ(t.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(t.status().message()), HasSubstr("initializer 'conv1.weight'"));
  EXPECT_THAT(std::string(t.status().message()), HasSubstr("f32[2,3] needs 6 values"));

  onnx::TensorProto raw = Proto(onnx::TensorProto::INT32, {4}, "r");
  raw.set_raw_data(std::string(15, '\0'));
  auto r = TensorFromProto(raw);
  ASSERT_FALSE(r.ok());
  EXPECT_THAT(std::string(r.status().message()), HasSubstr("15 bytes"));

  // Values in the field of another type count as a mismatch too.
  onnx::TensorProto wrong_field = Proto(onnx::TensorProto::FLOAT, {1}, "w");
  wrong_field.add_int64_data(1);
  EXPECT_FALSE(TensorFromProto(wrong_field).ok());
}

TEST(OnnxTensorTest, RejectsBadDimsTypesAndExternalData) {
  onnx::TensorProto neg = Proto(onnx::TensorProto::FLOAT, {-1});
  EXPECT_FALSE(TensorFromProto(neg).ok());
  onnx::TensorProto huge = Proto(onnx::TensorProto::FLOAT, {int64_t{1} << 40, int64_t{1} << 40});
  EXPECT_FALSE(TensorFromProto(huge).ok());
  onnx::TensorProto undefined = Proto(onnx::TensorProto::UNDEFINED, {1});
  EXPECT_FALSE(TensorFromProto(undefined).ok());
  onnx::TensorProto unknown = Proto(99, {1});
  EXPECT_FALSE(TensorFromProto(unknown).ok());
  onnx::TensorProto external = Proto(onnx::TensorProto::FLOAT, {1});
  external.set_data_location(onnx::TensorProto::EXTERNAL);
  EXPECT_FALSE(TensorFromProto(external).ok());
}

TEST(OnnxTensorTest, EmptyAndScalarTensors) {
  onnx::TensorProto empty = Proto(onnx::TensorProto::FLOAT, {0, 3});
  auto e = TensorFromProto(empty);
  ASSERT_TRUE(e.ok()) << e.status();
  EXPECT_EQ(e->NumElements(), 0);
  onnx::TensorProto scalar = Proto(onnx::TensorProto::INT64, {});
  scalar.add_int64_data(5);
  auto s = TensorFromProto(scalar);
  ASSERT_TRUE(s.ok());
  EXPECT_TRUE(s->shape().is_scalar());
  EXPECT_EQ(s->GetAsInt64(0), 5);
}

TEST(OnnxTensorTest, TypeProtoToValueType) {
  onnx::TypeProto t;
  auto* tt = t.mutable_tensor_type();
  tt->set_elem_type(onnx::TensorProto::FLOAT);
  tt->mutable_shape()->add_dim()->set_dim_param("batch");
  tt->mutable_shape()->add_dim()->set_dim_value(3);
  tt->mutable_shape()->add_dim();  // neither value nor param
  auto v = OnnxTypeToValueType(t);
  ASSERT_TRUE(v.ok()) << v.status();
  EXPECT_EQ(v->ToString(), "f32[-1,3,-1]");

  onnx::TypeProto no_shape;
  no_shape.mutable_tensor_type()->set_elem_type(onnx::TensorProto::INT64);
  EXPECT_EQ(OnnxTypeToValueType(no_shape)->ToString(), "i64[?]");

  onnx::TypeProto seq;
  *seq.mutable_sequence_type()->mutable_elem_type() = t;
  EXPECT_EQ(OnnxTypeToValueType(seq)->ToString(), "seq<f32[-1,3,-1]>");
  onnx::TypeProto opt;
  *opt.mutable_optional_type()->mutable_elem_type() = seq;
  EXPECT_EQ(OnnxTypeToValueType(opt)->kind(), ir::ValueType::Kind::kOptional);
  EXPECT_EQ(OnnxTypeToValueType(opt)->ToString(), "opt<seq<f32[-1,3,-1]>>");

  onnx::TypeProto map;
  map.mutable_map_type()->set_key_type(onnx::TensorProto::INT64);
  auto m = OnnxTypeToValueType(map, "input 'm'");
  ASSERT_FALSE(m.ok());
  EXPECT_THAT(std::string(m.status().message()), HasSubstr("input 'm'"));
}

}  // namespace
}  // namespace ge::frontend
