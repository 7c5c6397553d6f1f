// Shape inference of the ops of issue 21: NonZero, the normalization and
// pooling ops of norm_pool_ops.cc, the random ops (with their size bounds
// and the stateful flag) and the integer / quantized ops.
#include "gtest/gtest.h"
#include "tests/unit/base/ops/op_test_util.h"

namespace ge::ops::testing {
namespace {

using Ints = std::vector<int64_t>;

void AddNormPoolCases(std::vector<InferCase>& t) {
  t.push_back({.op = "NonZero", .inputs = {"f32[2,3]"}, .outputs = {"i64[2,-1]"}});
  t.push_back({.op = "NonZero", .inputs = {"bool[]"}, .outputs = {"i64[1,-1]"}});
  t.push_back({.op = "NonZero", .inputs = {"i32[0,3]"}, .outputs = {"i64[2,0]"}});
  t.push_back({.op = "NonZero", .inputs = {"u8[-1,4,2]"}, .outputs = {"i64[3,-1]"}});
  t.push_back({.op = "NonZero", .inputs = {"f32[?]"}, .outputs = {"i64[-1,-1]"}});
  t.push_back({.op = "NonZero", .inputs = {"string[2]"}, .outputs = {""}, .error = "not allowed for T"});
  t.push_back({.op = "MeanVarianceNormalization", .inputs = {"f32[2,3,4,5]"}, .outputs = {"f32[2,3,4,5]"}});
  t.push_back({.op = "MeanVarianceNormalization",
               .inputs = {"f16[-1,3,-1]"},
               .attrs = {{"axes", Ints{0, 2}}},
               .outputs = {"f16[-1,3,-1]"}});
  t.push_back({.op = "MeanVarianceNormalization", .inputs = {"f32[2,3]"}, .outputs = {""}, .error = "out of range"});
  t.push_back({.op = "LpNormalization", .inputs = {"f32[2,3]"}, .outputs = {"f32[2,3]"}});
  t.push_back(
      {.op = "LpNormalization", .inputs = {"f64[-1,3]"}, .attrs = {{"axis", 0}, {"p", 1}}, .outputs = {"f64[-1,3]"}});
  t.push_back({.op = "LpNormalization",
               .inputs = {"f32[2,3]"},
               .attrs = {{"p", 3}},
               .outputs = {""},
               .error = "p must be 1 or 2"});
  t.push_back({.op = "LpNormalization",
               .inputs = {"f32[2,3]"},
               .attrs = {{"axis", 2}},
               .outputs = {""},
               .error = "out of range"});
  t.push_back({.op = "LpPool",
               .inputs = {"f32[1,3,8,8]"},
               .attrs = {{"kernel_shape", Ints{3, 3}}, {"strides", Ints{2, 2}}},
               .outputs = {"f32[1,3,3,3]"}});
  t.push_back({.op = "LpPool",
               .inputs = {"f32[-1,3,8]"},
               .attrs = {{"kernel_shape", Ints{2}}, {"auto_pad", "SAME_UPPER"}},
               .outputs = {"f32[-1,3,8]"}});
  t.push_back({.op = "LpPool",
               .inputs = {"f32[1,3,8]"},
               .attrs = {{"kernel_shape", Ints{2}}, {"p", 0}},
               .outputs = {""},
               .error = "p must be a positive integer"});
  t.push_back({.op = "GlobalLpPool", .inputs = {"f32[2,3,5,7]"}, .outputs = {"f32[2,3,1,1]"}});
  t.push_back({.op = "GlobalLpPool", .inputs = {"f32[-1,3,-1]"}, .attrs = {{"p", 3}}, .outputs = {"f32[-1,3,1]"}});
  t.push_back({.op = "GlobalLpPool", .inputs = {"f32[3]"}, .outputs = {""}, .error = "rank >= 2"});
  t.push_back({.op = "MaxRoiPool",
               .inputs = {"f32[1,3,10,10]", "f32[4,5]"},
               .attrs = {{"pooled_shape", Ints{2, 3}}},
               .outputs = {"f32[4,3,2,3]"}});
  t.push_back({.op = "MaxRoiPool",
               .inputs = {"f32[-1,3,-1,-1]", "f32[-1,5]"},
               .attrs = {{"pooled_shape", Ints{2, 2}}},
               .outputs = {"f32[-1,3,2,2]"}});
  t.push_back({.op = "MaxRoiPool",
               .inputs = {"f32[1,3,10,10]", "f32[4,4]"},
               .attrs = {{"pooled_shape", Ints{2, 2}}},
               .outputs = {""},
               .error = "rois must be [num_rois, 5]"});
  t.push_back({.op = "MaxRoiPool",
               .inputs = {"f32[1,3,10,10]", "f32[4,5]"},
               .attrs = {{"pooled_shape", Ints{0, 2}}},
               .outputs = {""},
               .error = "two positive integers"});
  // Hostile: a pooled_shape whose output would not fit any memory.
  t.push_back({.op = "MaxRoiPool",
               .inputs = {"f32[1,3,10,10]", "f32[4,5]"},
               .attrs = {{"pooled_shape", Ints{int64_t{1} << 31, int64_t{1} << 31}}},
               .outputs = {""},
               .error = "more than 2^36 elements"});
}

void AddRandomCases(std::vector<InferCase>& t) {
  t.push_back({.op = "RandomNormal", .inputs = {}, .attrs = {{"shape", Ints{2, 3}}}, .outputs = {"f32[2,3]"}});
  t.push_back(
      {.op = "RandomNormal", .inputs = {}, .attrs = {{"shape", Ints{4}}, {"dtype", 11}}, .outputs = {"f64[4]"}});
  t.push_back({.op = "RandomNormal",
               .inputs = {},
               .attrs = {{"shape", Ints{4}}, {"dtype", 6}},
               .outputs = {""},
               .error = "dtype i32 is not allowed"});
  t.push_back({.op = "RandomNormal",
               .inputs = {},
               .attrs = {{"shape", Ints{1000000, 1000000}}},
               .outputs = {""},
               .error = "more than 2^36 elements"});
  t.push_back({.op = "RandomNormal",
               .inputs = {},
               .attrs = {{"shape", Ints{2, -1}}},
               .outputs = {""},
               .error = "dim -1 is negative"});
  t.push_back(
      {.op = "RandomUniform", .inputs = {}, .attrs = {{"shape", Ints{3}}, {"dtype", 10}}, .outputs = {"f16[3]"}});
  t.push_back({.op = "RandomUniform",
               .inputs = {},
               .attrs = {{"shape", Ints{int64_t{1} << 40}}},
               .outputs = {""},
               .error = "more than 2^36 elements"});
  t.push_back({.op = "RandomNormalLike", .inputs = {"f32[2,-1]"}, .outputs = {"f32[2,-1]"}});
  t.push_back({.op = "RandomNormalLike", .inputs = {"i64[2,3]"}, .attrs = {{"dtype", 11}}, .outputs = {"f64[2,3]"}});
  t.push_back({.op = "RandomNormalLike", .inputs = {"i64[2,3]"}, .outputs = {""}, .error = "dtype i64 is not allowed"});
  t.push_back({.op = "RandomUniformLike", .inputs = {"f16[?]"}, .outputs = {"f16[?]"}});
  t.push_back(
      {.op = "RandomUniformLike", .inputs = {"bool[2]"}, .outputs = {""}, .error = "dtype bool is not allowed"});
  t.push_back({.op = "Bernoulli", .inputs = {"f32[10]"}, .outputs = {"f32[10]"}});
  t.push_back({.op = "Bernoulli", .inputs = {"f64[-1,2]"}, .attrs = {{"dtype", 9}}, .outputs = {"bool[-1,2]"}});
  t.push_back({.op = "Bernoulli", .inputs = {"i32[10]"}, .outputs = {""}, .error = "not allowed for T1"});
  t.push_back({.op = "Multinomial", .inputs = {"f32[3,5]"}, .attrs = {{"sample_size", 7}}, .outputs = {"i32[3,7]"}});
  t.push_back({.op = "Multinomial", .inputs = {"f32[-1,5]"}, .attrs = {{"dtype", 7}}, .outputs = {"i64[-1,1]"}});
  t.push_back({.op = "Multinomial", .inputs = {"f32[5]"}, .outputs = {""}, .error = "[batch, class_size]"});
  t.push_back({.op = "Multinomial",
               .inputs = {"f32[3,5]"},
               .attrs = {{"sample_size", 0}},
               .outputs = {""},
               .error = "sample_size must be positive"});
  // Hostile: 10^12 samples per row.
  t.push_back({.op = "Multinomial",
               .inputs = {"f32[1,5]"},
               .attrs = {{"sample_size", int64_t{1000000000000}}},
               .outputs = {""},
               .error = "more than 2^36 elements"});
}

void AddQuantizedCases(std::vector<InferCase>& t) {
  t.push_back({.op = "DynamicQuantizeLinear", .inputs = {"f32[2,3]"}, .outputs = {"u8[2,3]", "f32[]", "u8[]"}});
  t.push_back({.op = "DynamicQuantizeLinear", .inputs = {"f32[-1]"}, .outputs = {"u8[-1]", "f32[]", "u8[]"}});
  t.push_back({.op = "DynamicQuantizeLinear", .inputs = {"f64[2]"}, .outputs = {"", "", ""}, .error = "expected f32"});
  t.push_back({.op = "MatMulInteger", .inputs = {"u8[4,3]", "i8[3,2]", "u8[]", "i8[2]"}, .outputs = {"i32[4,2]"}});
  t.push_back({.op = "MatMulInteger", .inputs = {"i8[-1,2,4,3]", "u8[3,5]"}, .outputs = {"i32[-1,2,4,5]"}});
  t.push_back({.op = "MatMulInteger", .inputs = {"u8[4,3]", "u8[2,2]"}, .outputs = {""}, .error = "[4,3]"});
  t.push_back({.op = "MatMulInteger",
               .inputs = {"u8[4,3]", "u8[3,2]", "i8[]"},
               .outputs = {""},
               .error = "has dtype i8 but T1 is u8"});
  t.push_back({.op = "QLinearMatMul",
               .inputs = {"u8[2,4]", "f32[]", "u8[]", "u8[4,3]", "f32[]", "u8[]", "f32[]", "u8[]"},
               .outputs = {"u8[2,3]"}});
  t.push_back({.op = "QLinearMatMul",
               .inputs = {"i8[-1,2,4]", "f32[1]", "i8[1]", "i8[-1,4,3]", "f32[3]", "i8[3]", "f32[]", "i8[]"},
               .outputs = {"i8[-1,2,3]"}});
  t.push_back({.op = "QLinearMatMul",
               .inputs = {"u8[2,4]", "f32[]", "u8[]", "u8[4,3]", "f32[]", "u8[]", "f32[2]", "u8[]"},
               .outputs = {""},
               .error = "y_scale must be a scalar"});
  t.push_back({.op = "_QLinearAdd",
               .inputs = {"u8[1,8,4,4]", "f32[]", "u8[]", "u8[1,8,4,4]", "f32[]", "u8[]", "f32[]", "u8[]"},
               .outputs = {"u8[1,8,4,4]"}});
  t.push_back({.op = "_QLinearAdd",
               .inputs = {"i8[-1,8]", "f32[]", "i8[]", "i8[2,-1]", "f32[]", "i8[]", "f32[]", "i8[]"},
               .outputs = {"i8[2,8]"}});
  t.push_back({.op = "_QLinearAdd",
               .inputs = {"u8[2,3]", "f32[]", "u8[]", "u8[3,2]", "f32[]", "u8[]", "f32[]", "u8[]"},
               .outputs = {""},
               .error = "or broadcast to it"});
  // B broadcasting into A (a bias over the last axis, a scalar): C has A's shape.
  t.push_back({.op = "_QLinearAdd",
               .inputs = {"u8[2,3,8]", "f32[]", "u8[]", "u8[8]", "f32[]", "u8[]", "f32[]", "u8[]"},
               .outputs = {"u8[2,3,8]"}});
  t.push_back({.op = "_QLinearAdd",
               .inputs = {"i8[-1,4]", "f32[]", "i8[]", "i8[]", "f32[]", "i8[]", "f32[]", "i8[]"},
               .outputs = {"i8[-1,4]"}});
  t.push_back({.op = "_QLinearAdd",
               .inputs = {"u8[8]", "f32[]", "u8[]", "u8[2,8]", "f32[]", "u8[]", "f32[]", "u8[]"},
               .outputs = {""},
               .error = "or broadcast to it"});
  t.push_back({.op = "ConvInteger", .inputs = {"u8[1,1,3,3]", "u8[1,1,2,2]", "u8[]"}, .outputs = {"i32[1,1,2,2]"}});
  t.push_back({.op = "ConvInteger",
               .inputs = {"u8[-1,1,3,3]", "i8[4,1,2,2]", "", "i8[4]"},
               .attrs = {{"pads", Ints{1, 1, 1, 1}}},
               .outputs = {"i32[-1,4,4,4]"}});
  t.push_back({.op = "ConvInteger",
               .inputs = {"u8[1,1,3,3]", "u8[1,1,2,2]", "u8[3]"},
               .outputs = {""},
               .error = "x_zero_point must be a scalar"});
  t.push_back({.op = "QLinearConv",
               .inputs = {"u8[1,2,7,7]", "f32[]", "u8[]", "i8[4,2,3,3]", "f32[4]", "i8[4]", "f32[]", "u8[]", "i32[4]"},
               .outputs = {"u8[1,4,5,5]"}});
  t.push_back({.op = "QLinearConv",
               .inputs = {"i8[1,1,-1,7]", "f32[]", "i8[]", "i8[1,1,1,1]", "f32[]", "i8[]", "f32[]", "i8[]"},
               .outputs = {"i8[1,1,-1,7]"}});
  t.push_back({.op = "QLinearConv",
               .inputs = {"u8[1,2,7,7]", "f32[]", "u8[]", "i8[4,2,3,3]", "f32[4,1]", "i8[4]", "f32[]", "u8[]"},
               .outputs = {""},
               .error = "w_scale must be a scalar or 1-D"});
}

}  // namespace

const std::vector<InferCase>& NormRandomQuantCases() {
  static const auto* cases = [] {
    auto* t = new std::vector<InferCase>();
    AddNormPoolCases(*t);
    AddRandomCases(*t);
    AddQuantizedCases(*t);
    return t;
  }();
  return *cases;
}

TEST(NormRandomQuantOpsTest, Inference) { RunCases(NormRandomQuantCases()); }

TEST(NormRandomQuantOpsTest, RandomOpsAreStatefulAndNothingElseNew) {
  const OpRegistry& r = OpRegistry::Global();
  for (const char* op :
       {"RandomNormal", "RandomUniform", "RandomNormalLike", "RandomUniformLike", "Bernoulli", "Multinomial"}) {
    ASSERT_NE(r.Find(op), nullptr) << op;
    EXPECT_TRUE(r.Find(op)->stateful) << op;
    EXPECT_NE(r.Find(op)->FindAttr("seed"), nullptr) << op;
  }
  for (const char* op :
       {"NonZero", "MeanVarianceNormalization", "LpPool", "MaxRoiPool", "QLinearConv", "DynamicQuantizeLinear"}) {
    EXPECT_FALSE(r.Find(op)->stateful) << op;
  }
  EXPECT_TRUE(r.Find("NonZero")->value_dependent_output_shape);
}

}  // namespace ge::ops::testing
