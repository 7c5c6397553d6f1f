// Attack class "size and count bounds" and "malformed requests" for the
// operators of issue 21 (docs/security.md): ExecuteOp calls that ask the
// new operators for more than a daemon can give or hand them parameters
// that do not fit — a RandomNormal shape of exabytes and Multinomial's
// sample_size (refused: random ops are stateful, ExecuteOp never runs
// them), DFT's dft_length, MaxRoiPool's rois and pooled_shape (ged's bound
// for generated tensors), and int8 operators whose scale and zero-point
// shapes do not match their tensors. Each is refused with its code before anything
// large is allocated (or, for rois outside the image, computed as ONNX
// defines); the fixture checks nothing leaked, the daemon is up and bob's
// concurrent runs stay right.
#include <cmath>
#include <cstring>

#include "tests/adversarial/adversarial_harness.h"

namespace ge::adversarial {
namespace {

using grpc::StatusCode;

v1::Value RawValue(v1::DataType dtype, const std::string& bytes, const std::vector<int64_t>& dims) {
  v1::Value v;
  v1::Tensor* t = v.mutable_tensor();
  t->set_dtype(dtype);
  for (int64_t d : dims) t->add_dims(d);
  t->set_raw_data(bytes);
  return v;
}

v1::Value U8Value(const std::vector<uint8_t>& values, const std::vector<int64_t>& dims) {
  return RawValue(v1::DT_UINT8, std::string(values.begin(), values.end()), dims);
}

v1::Value I8Value(const std::vector<int8_t>& values, const std::vector<int64_t>& dims) {
  std::string bytes(values.size(), '\0');
  if (!values.empty()) std::memcpy(bytes.data(), values.data(), values.size());
  return RawValue(v1::DT_INT8, bytes, dims);
}

v1::AttrValueDef Ints(const std::vector<int64_t>& values) {
  v1::AttrValueDef a;
  for (int64_t v : values) a.mutable_ints()->add_values(v);
  return a;
}

v1::AttrValueDef Int(int64_t value) {
  v1::AttrValueDef a;
  a.set_i(value);
  return a;
}

// Random ops are stateful: ExecuteOp refuses them whatever their sizes
// (their bounds are checked when a session graph is compiled).
const std::vector<StatusCode> kStatefulCodes = {StatusCode::FAILED_PRECONDITION, StatusCode::INVALID_ARGUMENT,
                                                StatusCode::UNIMPLEMENTED};

class NewOpsTest : public AdversarialTest {
 protected:
  grpc::Status Execute(const v1::ExecuteOpRequest& r, v1::ExecuteOpResponse* out = nullptr) {
    v1::ExecuteOpResponse local;
    v1::ExecuteOpResponse* response = out != nullptr ? out : &local;
    grpc::Status s = h().alice().ExecuteOp(r, response);
    Scan(s, *response, "ExecuteOp " + r.op_type());
    return s;
  }
};

TEST_F(NewOpsTest, RandomNormalWithAShapeOfExabytes) {
  v1::ExecuteOpRequest r;
  r.set_op_type("RandomNormal");
  (*r.mutable_attrs())["shape"] = Ints({int64_t{1} << 30, int64_t{1} << 30, 64});
  EXPECT_TRUE(RefusedWithAnyOf(Execute(r), kStatefulCodes, {"stateful"}));
}

TEST_F(NewOpsTest, RandomUniformLikeOfADeclaredHugeInput) {
  v1::ExecuteOpRequest r;
  r.set_op_type("RandomUniformLike");
  *r.add_inputs() = FloatValue({}, {int64_t{1} << 20, int64_t{1} << 20});  // 4 TiB declared, no bytes
  const grpc::Status s = Execute(r);
  EXPECT_TRUE(RefusedWithAnyOf(s, {StatusCode::RESOURCE_EXHAUSTED, StatusCode::INVALID_ARGUMENT}));
}

TEST_F(NewOpsTest, MultinomialWithAHugeSampleSize) {
  v1::ExecuteOpRequest r;
  r.set_op_type("Multinomial");
  *r.add_inputs() = FloatValue({0.0f, 1.0f, 2.0f}, {1, 3});
  (*r.mutable_attrs())["sample_size"] = Int(int64_t{1} << 40);
  EXPECT_TRUE(RefusedWithAnyOf(Execute(r), kStatefulCodes, {"stateful"}));
}

TEST_F(NewOpsTest, MultinomialWithANegativeSampleSize) {
  v1::ExecuteOpRequest r;
  r.set_op_type("Multinomial");
  *r.add_inputs() = FloatValue({0.0f, 1.0f}, {1, 2});
  (*r.mutable_attrs())["sample_size"] = Int(-5);
  EXPECT_TRUE(RefusedWithAnyOf(Execute(r), kStatefulCodes, {"stateful"}));
}

TEST_F(NewOpsTest, DftWithAHugeLength) {
  v1::ExecuteOpRequest r;
  r.set_op_type("DFT");
  *r.add_inputs() = FloatValue({1, 2, 3, 4}, {1, 4, 1});
  *r.add_inputs() = Int64Value({int64_t{1} << 40}, {});
  EXPECT_TRUE(RefusedWithAnyOf(Execute(r), {StatusCode::RESOURCE_EXHAUSTED, StatusCode::INVALID_ARGUMENT},
                               {"bound for generated tensors"}));
}

TEST_F(NewOpsTest, DftWithANonPositiveLength) {
  for (int64_t length : {int64_t{0}, int64_t{-3}}) {
    v1::ExecuteOpRequest r;
    r.set_op_type("DFT");
    *r.add_inputs() = FloatValue({1, 2, 3, 4}, {1, 4, 1});
    *r.add_inputs() = Int64Value({length}, {});
    EXPECT_TRUE(Refused(Execute(r), StatusCode::INVALID_ARGUMENT, {"dft_length"})) << length;
  }
}

TEST_F(NewOpsTest, MaxRoiPoolWithAHugePooledShape) {
  v1::ExecuteOpRequest r;
  r.set_op_type("MaxRoiPool");
  *r.add_inputs() = FloatValue(std::vector<float>(16, 1.0f), {1, 1, 4, 4});
  *r.add_inputs() = FloatValue({0, 0, 0, 3, 3}, {1, 5});
  (*r.mutable_attrs())["pooled_shape"] = Ints({int64_t{1} << 31, int64_t{1} << 31});
  EXPECT_TRUE(RefusedWithAnyOf(Execute(r), {StatusCode::RESOURCE_EXHAUSTED, StatusCode::INVALID_ARGUMENT},
                               {"bound for generated tensors"}));
}

TEST_F(NewOpsTest, MaxRoiPoolWithABatchIndexOutOfRange) {
  v1::ExecuteOpRequest r;
  r.set_op_type("MaxRoiPool");
  *r.add_inputs() = FloatValue(std::vector<float>(16, 1.0f), {1, 1, 4, 4});
  *r.add_inputs() = FloatValue({7, 0, 0, 3, 3}, {1, 5});  // batch 7 of 1
  (*r.mutable_attrs())["pooled_shape"] = Ints({2, 2});
  EXPECT_TRUE(Refused(Execute(r), StatusCode::INVALID_ARGUMENT, {"batch"}));
}

TEST_F(NewOpsTest, MaxRoiPoolWithRoisOutsideTheImage) {
  // Corners far outside the image and reversed: every bin is clipped to the
  // image (empty bins give 0), as ONNX Runtime computes; no read outside.
  v1::ExecuteOpRequest r;
  r.set_op_type("MaxRoiPool");
  *r.add_inputs() = FloatValue(std::vector<float>(16, 1.0f), {1, 1, 4, 4});
  *r.add_inputs() = FloatValue({0, -1e9f, -1e9f, 1e9f, 1e9f, 0, 3, 3, -2, -2}, {2, 5});
  (*r.mutable_attrs())["pooled_shape"] = Ints({2, 2});
  v1::ExecuteOpResponse out;
  const grpc::Status s = Execute(r, &out);
  ASSERT_TRUE(s.ok()) << s.error_message();
  ASSERT_EQ(out.outputs_size(), 1);
  EXPECT_EQ(out.outputs(0).tensor().raw_data().size(), 2u * 1 * 2 * 2 * sizeof(float));
}

// QLinearConv with x [1, 2, 3, 3] and w [4, 2, 1, 1]; `w_scale` and
// `x_zero_point` as given.
v1::ExecuteOpRequest QLinearConv(const v1::Value& x_zero_point, const v1::Value& w_scale) {
  v1::ExecuteOpRequest r;
  r.set_op_type("QLinearConv");
  *r.add_inputs() = U8Value(std::vector<uint8_t>(18, 200), {1, 2, 3, 3});
  *r.add_inputs() = FloatValue({0.1f}, {});
  *r.add_inputs() = x_zero_point;
  *r.add_inputs() = I8Value(std::vector<int8_t>(8, 127), {4, 2, 1, 1});
  *r.add_inputs() = w_scale;
  *r.add_inputs() = I8Value({0}, {});
  *r.add_inputs() = FloatValue({0.5f}, {});
  *r.add_inputs() = U8Value({0}, {});
  return r;
}

TEST_F(NewOpsTest, QLinearConvWithAScaleOfTheWrongLength) {
  // Four output channels, three scales.
  EXPECT_TRUE(Refused(Execute(QLinearConv(U8Value({5}, {}), FloatValue({0.1f, 0.2f, 0.3f}, {3}))),
                      StatusCode::INVALID_ARGUMENT, {"w_scale"}));
}

TEST_F(NewOpsTest, QLinearConvWithAPerChannelActivationZeroPoint) {
  EXPECT_TRUE(Refused(Execute(QLinearConv(U8Value({5, 6}, {2}), FloatValue({0.1f}, {}))), StatusCode::INVALID_ARGUMENT,
                      {"x_zero_point"}));
}

TEST_F(NewOpsTest, QLinearMatMulWithMismatchedParameterShapes) {
  v1::ExecuteOpRequest r;
  r.set_op_type("QLinearMatMul");
  *r.add_inputs() = U8Value(std::vector<uint8_t>(6, 1), {2, 3});
  *r.add_inputs() = FloatValue({0.1f}, {});
  *r.add_inputs() = U8Value({1, 2, 3, 4, 5}, {5});  // neither per tensor nor per row
  *r.add_inputs() = I8Value(std::vector<int8_t>(12, -128), {3, 4});
  *r.add_inputs() = FloatValue({0.1f}, {});
  *r.add_inputs() = I8Value({0}, {});
  *r.add_inputs() = FloatValue({0.5f}, {});
  *r.add_inputs() = U8Value({0}, {});
  EXPECT_TRUE(Refused(Execute(r), StatusCode::INVALID_ARGUMENT, {"a_zero_point"}));
}

TEST_F(NewOpsTest, MatMulIntegerWithAWeightZeroPointOfTheWrongLength) {
  v1::ExecuteOpRequest r;
  r.set_op_type("MatMulInteger");
  *r.add_inputs() = U8Value(std::vector<uint8_t>(6, 255), {2, 3});
  *r.add_inputs() = I8Value(std::vector<int8_t>(12, 127), {3, 4});
  *r.add_inputs() = U8Value({0}, {});
  *r.add_inputs() = I8Value({1, 2, 3}, {3});  // B has 4 columns
  EXPECT_TRUE(Refused(Execute(r), StatusCode::INVALID_ARGUMENT, {"b_zero_point"}));
}

TEST_F(NewOpsTest, ConvIntegerWithADeclaredHugeInput) {
  v1::ExecuteOpRequest r;
  r.set_op_type("ConvInteger");
  *r.add_inputs() = U8Value({}, {1, 1, int64_t{1} << 20, int64_t{1} << 20});  // 1 TiB declared, no bytes
  *r.add_inputs() = I8Value({1}, {1, 1, 1, 1});
  EXPECT_TRUE(RefusedWithAnyOf(Execute(r), {StatusCode::RESOURCE_EXHAUSTED, StatusCode::INVALID_ARGUMENT}));
}

TEST_F(NewOpsTest, DynamicQuantizeLinearOfNaN) {
  v1::ExecuteOpRequest r;
  r.set_op_type("DynamicQuantizeLinear");
  *r.add_inputs() = FloatValue({1.0f, std::nanf(""), 2.0f}, {3});
  EXPECT_TRUE(Refused(Execute(r), StatusCode::INVALID_ARGUMENT, {"NaN"}));
}

}  // namespace
}  // namespace ge::adversarial
