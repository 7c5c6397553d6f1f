// Shape inference of the element-wise ops: unary maps, broadcasting binary
// and variadic ops, comparisons, Clip, PRelu, Where.
#include "gtest/gtest.h"
#include "tests/unit/base/ops/op_test_util.h"

namespace ge::ops::testing {
namespace {

// Unary ops that take floats and return their input type.
const char* const kFloatUnary[] = {
    "Relu", "Sigmoid", "Tanh", "Erf", "Sqrt", "Neg", "Abs", "Exp", "Log", "Ceil", "Floor",
    "Round", "Reciprocal", "Sign", "Sin", "Cos", "Tan", "Asin", "Acos", "Atan", "Sinh", "Cosh",
    "Asinh", "Acosh", "Atanh", "Softplus", "Softsign", "HardSwish", "HardSigmoid", "LeakyRelu",
    "Elu", "Selu", "Celu", "ThresholdedRelu", "Shrink", "Clip"};
// Binary ops whose output has the inputs' dtype.
const char* const kNumericBinary[] = {"Add", "Sub", "Mul", "Div", "Mod", "Pow"};
const char* const kComparisons[] = {"Equal", "Less", "Greater", "LessOrEqual", "GreaterOrEqual"};
const char* const kVariadic[] = {"Max", "Min", "Sum", "Mean"};

void AddUnaryCases(std::vector<InferCase>& t) {
  for (const char* op : kFloatUnary) {
    t.push_back({.op = op, .inputs = {"f32[2,3]"}, .outputs = {"f32[2,3]"}});
    t.push_back({.op = op, .inputs = {"f32[-1,3]"}, .outputs = {"f32[-1,3]"}});
    t.push_back({.op = op, .inputs = {"f32[?]"}, .outputs = {"f32[?]"}});
    t.push_back({.op = op, .inputs = {"f32[]"}, .outputs = {"f32[]"}});
    t.push_back({.op = op, .inputs = {"string[2]"}, .outputs = {""}, .error = "not allowed for T"});
  }
  for (const char* op : {"IsNaN", "IsInf"}) {
    t.push_back({.op = op, .inputs = {"f32[2,-1]"}, .outputs = {"bool[2,-1]"}});
    t.push_back({.op = op, .inputs = {"f32[?]"}, .outputs = {"bool[?]"}});
    t.push_back({.op = op, .inputs = {"i64[2]"}, .outputs = {""}, .error = "has dtype i64"});
  }
  t.push_back({.op = "Not", .inputs = {"bool[2,-1]"}, .outputs = {"bool[2,-1]"}});
  t.push_back({.op = "Not", .inputs = {"f32[2]"}, .outputs = {""}, .error = "not allowed for T"});
  t.push_back({.op = "Relu", .inputs = {"i32[5]"}, .outputs = {"i32[5]"}});
  t.push_back({.op = "Sigmoid", .inputs = {"i32[5]"}, .outputs = {""}, .error = "input 0 (X) has dtype i32"});
  t.push_back({.op = "Relu", .inputs = {"f32[2]", "f32[2]"}, .outputs = {""},
               .error = "has 2 inputs, expected 1"});
  t.push_back({.op = "Relu", .inputs = {"f32[2]"}, .outputs = {"", ""}, .error = "has 2 outputs, expected 1"});
  t.push_back({.op = "Relu", .inputs = {"f32[2]"}, .attrs = {{"foo", 1}}, .outputs = {""},
               .error = "unknown attribute 'foo'"});
  t.push_back({.op = "Relu", .inputs = {"f32[2]"}, .attrs = {{"_ge_engine", "cpu_vector"}},
               .outputs = {"f32[2]"}});
  t.push_back({.op = "HardSigmoid", .inputs = {"f32[2]"}, .attrs = {{"alpha", 1}}, .outputs = {""},
               .error = "attribute 'alpha' is int, expected float"});
  t.push_back({.op = "LeakyRelu", .inputs = {"f16[2,-1]"}, .attrs = {{"alpha", 0.1f}},
               .outputs = {"f16[2,-1]"}});
  // Clip's bounds are optional scalars of the input's dtype.
  t.push_back({.op = "Clip", .inputs = {"f32[2,3]", "f32[]", ""}, .outputs = {"f32[2,3]"}});
  t.push_back({.op = "Clip", .inputs = {"f32[2,3]", "", "f32[]"}, .outputs = {"f32[2,3]"}});
  t.push_back({.op = "Clip", .inputs = {"i64[-1]", "i64[]", "i64[]"}, .outputs = {"i64[-1]"}});
  t.push_back({.op = "Clip", .inputs = {"f32[2,3]", "f32[2]", ""}, .outputs = {""},
               .error = "input 1 (min) must be a scalar"});
  t.push_back({.op = "Clip", .inputs = {"f32[2,3]", "i64[]"}, .outputs = {""},
               .error = "input 1 (min) has dtype i64 but T is f32"});
}

void AddBinaryCases(std::vector<InferCase>& t) {
  for (const char* op : kNumericBinary) {
    t.push_back({.op = op, .inputs = {"f32[2,3]", "f32[3]"}, .outputs = {"f32[2,3]"}});
    t.push_back({.op = op, .inputs = {"f32[-1,3]", "f32[4,1]"}, .outputs = {"f32[4,3]"}});
    t.push_back({.op = op, .inputs = {"f32[-1]", "f32[1]"}, .outputs = {"f32[-1]"}});
    t.push_back({.op = op, .inputs = {"f32[]", "f32[5,1,2]"}, .outputs = {"f32[5,1,2]"}});
    t.push_back({.op = op, .inputs = {"f32[?]", "f32[3]"}, .outputs = {"f32[?]"}});
    t.push_back({.op = op, .inputs = {"f32[2,3]", "f32[4]"}, .outputs = {""}, .error = "do not broadcast"});
  }
  for (const char* op : {"Add", "Sub", "Mul", "Div", "Mod"}) {
    t.push_back({.op = op, .inputs = {"f32[2]", "i64[2]"}, .outputs = {""},
                 .error = "input 1 (B) has dtype i64 but T is f32 from input 0 (A)"});
  }
  t.push_back({.op = "Add", .inputs = {"f32[2]"}, .outputs = {""}, .error = "has 1 inputs, expected 2"});
  t.push_back({.op = "Mod", .inputs = {"i32[4]", "i32[4]"}, .attrs = {{"fmod", 1}}, .outputs = {"i32[4]"}});
  // Pow's exponent may have another dtype than the base.
  t.push_back({.op = "Pow", .inputs = {"f32[2,3]", "i64[]"}, .outputs = {"f32[2,3]"}});
  t.push_back({.op = "BitShift", .inputs = {"u8[4]", "u8[1]"}, .attrs = {{"direction", "LEFT"}},
               .outputs = {"u8[4]"}});
  t.push_back({.op = "BitShift", .inputs = {"u32[-1,2]", "u32[?]"}, .attrs = {{"direction", "RIGHT"}},
               .outputs = {"u32[?]"}});
  t.push_back({.op = "BitShift", .inputs = {"u8[4]", "u8[1]"}, .outputs = {""},
               .error = "missing required attribute 'direction'"});
  for (const char* op : {"And", "Or", "Xor"}) {
    t.push_back({.op = op, .inputs = {"bool[2,1]", "bool[1,4]"}, .outputs = {"bool[2,4]"}});
    t.push_back({.op = op, .inputs = {"bool[-1]", "bool[1]"}, .outputs = {"bool[-1]"}});
    t.push_back({.op = op, .inputs = {"i32[2]", "i32[2]"}, .outputs = {""}, .error = "not allowed for T"});
  }
  for (const char* op : kComparisons) {
    t.push_back({.op = op, .inputs = {"f32[2,-1]", "f32[1,5]"}, .outputs = {"bool[2,5]"}});
    t.push_back({.op = op, .inputs = {"i64[?]", "i64[]"}, .outputs = {"bool[?]"}});
    t.push_back({.op = op, .inputs = {"f32[3]", "f32[2]"}, .outputs = {""}, .error = "do not broadcast"});
  }
  t.push_back({.op = "Equal", .inputs = {"bool[3]", "bool[3]"}, .outputs = {"bool[3]"}});
  t.push_back({.op = "PRelu", .inputs = {"f32[1,3,4,4]", "f32[3,1,1]"}, .outputs = {"f32[1,3,4,4]"}});
  t.push_back({.op = "PRelu", .inputs = {"f32[-1,3]", "f32[3]"}, .outputs = {"f32[-1,3]"}});
  t.push_back({.op = "PRelu", .inputs = {"f32[1,3,4,4]", "f32[5]"}, .outputs = {""},
               .error = "input 1 (slope): shape [5] cannot broadcast to [1,3,4,4]"});
}

void AddVariadicCases(std::vector<InferCase>& t) {
  for (const char* op : kVariadic) {
    t.push_back({.op = op, .inputs = {"f32[2,1]", "f32[3]", "f32[1,1]"}, .outputs = {"f32[2,3]"}});
    t.push_back({.op = op, .inputs = {"f32[-1,4]"}, .outputs = {"f32[-1,4]"}});
    t.push_back({.op = op, .inputs = {"f32[2]", "f32[?]"}, .outputs = {"f32[?]"}});
    t.push_back({.op = op, .inputs = {}, .outputs = {""}, .error = "has 0 inputs, expected at least 1"});
    t.push_back({.op = op, .inputs = {"f32[2]", "f32[3]"}, .outputs = {""}, .error = "do not broadcast"});
  }
  t.push_back({.op = "Where", .inputs = {"bool[2,1]", "f32[1,3]", "f32[2,3]"}, .outputs = {"f32[2,3]"}});
  t.push_back({.op = "Where", .inputs = {"bool[-1]", "i64[]", "i64[]"}, .outputs = {"i64[-1]"}});
  t.push_back({.op = "Where", .inputs = {"bool[?]", "f32[2]", "f32[2]"}, .outputs = {"f32[?]"}});
  t.push_back({.op = "Where", .inputs = {"f32[2]", "f32[2]", "f32[2]"}, .outputs = {""},
               .error = "input 0 (condition) has dtype f32, expected bool"});
  t.push_back({.op = "Where", .inputs = {"bool[2]", "f32[2]", "i32[2]"}, .outputs = {""},
               .error = "input 2 (Y) has dtype i32 but T is f32"});
  t.push_back({.op = "Where", .inputs = {"bool[4]", "f32[2]", "f32[2]"}, .outputs = {""},
               .error = "do not broadcast"});
}

}  // namespace

const std::vector<InferCase>& ElementwiseCases() {
  static const auto* cases = [] {
    auto* t = new std::vector<InferCase>();
    AddUnaryCases(*t);
    AddBinaryCases(*t);
    AddVariadicCases(*t);
    return t;
  }();
  return *cases;
}

TEST(ElementwiseOpsTest, Inference) { RunCases(ElementwiseCases()); }

TEST(ElementwiseOpsTest, InplaceRules) {
  const OpRegistry& r = OpRegistry::Global();
  using Pairs = std::vector<std::pair<int, int>>;
  EXPECT_EQ(r.Find("Relu")->inplace, (Pairs{{0, 0}}));
  EXPECT_EQ(r.Find("Add")->inplace, (Pairs{{0, 0}, {0, 1}}));
  EXPECT_EQ(r.Find("Pow")->inplace, (Pairs{{0, 0}}));
  EXPECT_TRUE(r.Find("Equal")->inplace.empty());  // bool output, other element size
  EXPECT_TRUE(r.Find("Relu")->views.empty());
}

}  // namespace ge::ops::testing
