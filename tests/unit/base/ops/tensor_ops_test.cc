// Shape inference of the data-movement and shape ops, with value inputs
// known (constants, run time) and unknown (compile time).
#include "gtest/gtest.h"
#include "tests/unit/base/ops/op_test_util.h"

namespace ge::ops::testing {
namespace {

using Ints = std::vector<int64_t>;
constexpr int64_t kMax = std::numeric_limits<int64_t>::max();

void AddReshapeCases(std::vector<InferCase>& t) {
  t.push_back({.op = "Reshape", .inputs = {"f32[2,3,4]", "i64[2]"}, .values = {{1, I64s({6, 4})}},
               .outputs = {"f32[6,4]"}});
  t.push_back({.op = "Reshape", .inputs = {"f32[2,3,4]", "i64[2]"}, .values = {{1, I64s({-1, 4})}},
               .outputs = {"f32[6,4]"}});
  t.push_back({.op = "Reshape", .inputs = {"f32[2,3,4]", "i64[3]"}, .values = {{1, I64s({0, 0, -1})}},
               .outputs = {"f32[2,3,4]"}});
  // Unknown dims copied by 0 cancel out of the -1's arithmetic.
  t.push_back({.op = "Reshape", .inputs = {"f32[-1,3,4]", "i64[2]"}, .values = {{1, I64s({0, -1})}},
               .outputs = {"f32[-1,12]"}});
  t.push_back({.op = "Reshape", .inputs = {"f32[-1,3,4]", "i64[2]"}, .values = {{1, I64s({-1, 4})}},
               .outputs = {"f32[-1,4]"}});
  t.push_back({.op = "Reshape", .inputs = {"f32[0,3]", "i64[2]"}, .attrs = {{"allowzero", 1}},
               .values = {{1, I64s({3, 0})}}, .outputs = {"f32[3,0]"}});
  t.push_back({.op = "Reshape", .inputs = {"f32[2,3]", "i64[0]"}, .values = {{1, I64s({})}}, .outputs = {""},
               .error = "cannot reshape [2,3] to []"});
  t.push_back({.op = "Reshape", .inputs = {"f32[1,1]", "i64[0]"}, .values = {{1, I64s({})}}, .outputs = {"f32[]"}});
  t.push_back({.op = "Reshape", .inputs = {"f32[?]", "i64[3]"}, .values = {{1, I64s({2, 0, -1})}},
               .outputs = {"f32[2,-1,-1]"}});
  // The target's value unknown (compile time): its length gives the rank.
  t.push_back({.op = "Reshape", .inputs = {"f32[2,3,4]", "i64[3]"}, .outputs = {"f32[-1,-1,-1]"}});
  t.push_back({.op = "Reshape", .inputs = {"f32[2,3,4]", "i64[-1]"}, .outputs = {"f32[?]"}});
  t.push_back({.op = "Reshape", .inputs = {"f32[2,3,4]", "i64[2]"}, .values = {{1, I64s({5, -1})}},
               .outputs = {""}, .error = "cannot reshape [2,3,4] to [5,-1]"});
  t.push_back({.op = "Reshape", .inputs = {"f32[2,3,4]", "i64[2]"}, .values = {{1, I64s({-1, -1})}},
               .outputs = {""}, .error = "more than one -1"});
  t.push_back({.op = "Reshape", .inputs = {"f32[2,3,4]", "i64[2]"}, .attrs = {{"allowzero", 1}},
               .values = {{1, I64s({0, -1})}}, .outputs = {""}, .error = "mixes 0 and -1"});
  t.push_back({.op = "Reshape", .inputs = {"f32[2,3]", "i64[3]"}, .values = {{1, I64s({0, 0, 0})}},
               .outputs = {""}, .error = "copies dim 2 (0)"});
  t.push_back({.op = "Reshape", .inputs = {"f32[2,3]", "i64[2,1]"}, .outputs = {""},
               .error = "input 1 (shape) must be 1-D"});
  t.push_back({.op = "Reshape", .inputs = {"f32[2,3]", "i32[2]"}, .outputs = {""},
               .error = "input 1 (shape) has dtype i32, expected i64"});
}

void AddLayoutCases(std::vector<InferCase>& t) {
  t.push_back({.op = "Transpose", .inputs = {"f32[2,3,4]"}, .outputs = {"f32[4,3,2]"}});
  t.push_back({.op = "Transpose", .inputs = {"f32[2,-1,4]"}, .attrs = {{"perm", Ints{0, 2, 1}}},
               .outputs = {"f32[2,4,-1]"}});
  t.push_back({.op = "Transpose", .inputs = {"f32[?]"}, .attrs = {{"perm", Ints{1, 0}}}, .outputs = {"f32[-1,-1]"}});
  t.push_back({.op = "Transpose", .inputs = {"f32[?]"}, .outputs = {"f32[?]"}});
  t.push_back({.op = "Transpose", .inputs = {"f32[2,3]"}, .attrs = {{"perm", Ints{0, 0}}}, .outputs = {""},
               .error = "not a permutation"});
  t.push_back({.op = "Transpose", .inputs = {"f32[2,3]"}, .attrs = {{"perm", Ints{0}}}, .outputs = {""},
               .error = "perm has 1 entries for input of rank 2"});
  t.push_back({.op = "Concat", .inputs = {"f32[2,3]", "f32[2,5]"}, .attrs = {{"axis", 1}}, .outputs = {"f32[2,8]"}});
  t.push_back({.op = "Concat", .inputs = {"f32[-1,3]", "f32[2,-1]"}, .attrs = {{"axis", 0}}, .outputs = {"f32[-1,3]"}});
  t.push_back({.op = "Concat", .inputs = {"f32[?]", "f32[2,5]"}, .attrs = {{"axis", -1}}, .outputs = {"f32[2,-1]"}});
  t.push_back({.op = "Concat", .inputs = {"f32[?]", "f32[?]"}, .attrs = {{"axis", 0}}, .outputs = {"f32[?]"}});
  t.push_back({.op = "Concat", .inputs = {"f32[4]"}, .attrs = {{"axis", 0}}, .outputs = {"f32[4]"}});
  t.push_back({.op = "Concat", .inputs = {"f32[2,3]", "f32[4,5]"}, .attrs = {{"axis", 1}}, .outputs = {""},
               .error = "input 1 has shape [4,5]: dim 0 is 4 but earlier inputs have 2"});
  t.push_back({.op = "Concat", .inputs = {"f32[2,3]", "f32[2]"}, .attrs = {{"axis", 0}}, .outputs = {""},
               .error = "input rank is 2"});
  t.push_back({.op = "Concat", .inputs = {"f32[2,3]", "f32[2,3]"}, .attrs = {{"axis", 2}}, .outputs = {""},
               .error = "axis 2 is out of range for rank 2"});
  t.push_back({.op = "Concat", .inputs = {"f32[2,3]"}, .outputs = {""}, .error = "missing required attribute 'axis'"});
  t.push_back({.op = "Concat", .inputs = {"f32[2,3]", "i32[2,3]"}, .attrs = {{"axis", 0}}, .outputs = {""},
               .error = "input 1 (inputs) has dtype i32 but T is f32"});
  t.push_back({.op = "Split", .inputs = {"f32[6,4]"}, .outputs = {"f32[3,4]", "f32[3,4]"}});
  t.push_back({.op = "Split", .inputs = {"f32[6,4]", "i64[3]"}, .attrs = {{"axis", 0}},
               .values = {{1, I64s({1, 2, 3})}}, .outputs = {"f32[1,4]", "f32[2,4]", "f32[3,4]"}});
  t.push_back({.op = "Split", .inputs = {"f32[6,-1]", "i64[2]"}, .attrs = {{"axis", -1}},
               .values = {{1, I64s({1, 2})}}, .outputs = {"f32[6,1]", "f32[6,2]"}});
  t.push_back({.op = "Split", .inputs = {"f32[6,4]", "i64[2]"}, .outputs = {"f32[-1,4]", "f32[-1,4]"}});
  t.push_back({.op = "Split", .inputs = {"f32[-1,4]"}, .outputs = {"f32[-1,4]", "f32[-1,4]"}});
  t.push_back({.op = "Split", .inputs = {"f32[?]"}, .outputs = {"f32[?]", "f32[?]"}});
  t.push_back({.op = "Split", .inputs = {"f32[5,4]"}, .outputs = {"", ""}, .error = "does not split evenly"});
  t.push_back({.op = "Split", .inputs = {"f32[6,4]", "i64[2]"}, .values = {{1, I64s({1, 2})}},
               .outputs = {"", ""}, .error = "sums to 3 but the split dim is 6"});
  t.push_back({.op = "Split", .inputs = {"f32[6,4]", "i64[3]"}, .values = {{1, I64s({1, 2, 3})}},
               .outputs = {"", ""}, .error = "has 3 sizes for 2 outputs"});
  t.push_back({.op = "Split", .inputs = {"f32[6,4]"}, .attrs = {{"axis", 2}}, .outputs = {"", ""},
               .error = "axis 2 is out of range"});
}

void AddSliceGatherCases(std::vector<InferCase>& t) {
  const std::vector<std::string> in4 = {"f32[10,20,30]", "i64[2]", "i64[2]", "i64[2]"};
  t.push_back({.op = "Slice", .inputs = in4,
               .values = {{1, I64s({2, -5})}, {2, I64s({8, kMax})}, {3, I64s({0, 2})}},
               .outputs = {"f32[6,20,5]"}});
  t.push_back({.op = "Slice", .inputs = {"f32[10,20]", "i64[1]", "i64[1]", "i64[1]", "i64[1]"},
               .values = {{1, I64s({-1})}, {2, I64s({-kMax})}, {3, I64s({0})}, {4, I64s({-2})}},
               .outputs = {"f32[5,20]"}});
  t.push_back({.op = "Slice", .inputs = {"f32[10]", "i32[1]", "i32[1]"}, .values = {{1, I32s({20})}, {2, I32s({30})}},
               .outputs = {"f32[0]"}});
  t.push_back({.op = "Slice", .inputs = {"f32[-1,20]", "i64[2]", "i64[2]"},
               .values = {{1, I64s({0, 5})}, {2, I64s({1, 10})}}, .outputs = {"f32[-1,5]"}});
  // Unknown bounds: the sliced axes become unknown, the rest stay.
  t.push_back({.op = "Slice", .inputs = {"f32[10,20,30]", "i64[1]", "i64[1]", "i64[1]"},
               .values = {{3, I64s({1})}}, .outputs = {"f32[10,-1,30]"}});
  t.push_back({.op = "Slice", .inputs = {"f32[10,20,30]", "i64[2]", "i64[2]"}, .outputs = {"f32[-1,-1,30]"}});
  t.push_back({.op = "Slice", .inputs = {"f32[10,20,30]", "i64[-1]", "i64[-1]"}, .outputs = {"f32[-1,-1,-1]"}});
  t.push_back({.op = "Slice", .inputs = {"f32[?]", "i64[1]", "i64[1]"},
               .values = {{1, I64s({0})}, {2, I64s({1})}}, .outputs = {"f32[?]"}});
  t.push_back({.op = "Slice", .inputs = {"f32[10]", "i64[1]", "i64[1]", "", "i64[1]"},
               .values = {{1, I64s({0})}, {2, I64s({5})}, {4, I64s({0})}}, .outputs = {""}, .error = "step of axis 0 is 0"});
  t.push_back({.op = "Slice", .inputs = {"f32[10]", "i64[1]", "i64[1]", "i64[1]"},
               .values = {{1, I64s({0})}, {2, I64s({5})}, {3, I64s({1})}}, .outputs = {""},
               .error = "axis 1 is out of range for rank 1"});
  t.push_back({.op = "Slice", .inputs = {"f32[10,10]", "i64[2]", "i64[1]"},
               .values = {{1, I64s({0, 0})}, {2, I64s({5})}}, .outputs = {""}, .error = "must have the same length"});
  t.push_back({.op = "Slice", .inputs = {"f32[10]", "i64[1]", "i32[1]"}, .outputs = {""},
               .error = "input 2 (ends) has dtype i32 but Tind is i64"});
  t.push_back({.op = "Gather", .inputs = {"f32[5,4,3]", "i64[2,6]"}, .attrs = {{"axis", 1}},
               .outputs = {"f32[5,2,6,3]"}});
  t.push_back({.op = "Gather", .inputs = {"f32[5,4]", "i32[]"}, .outputs = {"f32[4]"}});
  t.push_back({.op = "Gather", .inputs = {"f32[-1,4]", "i64[-1]"}, .attrs = {{"axis", -1}}, .outputs = {"f32[-1,-1]"}});
  t.push_back({.op = "Gather", .inputs = {"f32[5,4]", "i64[?]"}, .outputs = {"f32[?]"}});
  t.push_back({.op = "Gather", .inputs = {"f32[?]", "i64[3]"}, .outputs = {"f32[?]"}});
  t.push_back({.op = "Gather", .inputs = {"f32[5,4]", "i64[2]"}, .attrs = {{"axis", 2}}, .outputs = {""},
               .error = "axis 2 is out of range for rank 2"});
  t.push_back({.op = "Gather", .inputs = {"f32[5,4]", "f32[2]"}, .outputs = {""}, .error = "not allowed for Tind"});
}

void AddSqueezeCases(std::vector<InferCase>& t) {
  t.push_back({.op = "Unsqueeze", .inputs = {"f32[3,4]", "i64[2]"}, .values = {{1, I64s({0, -1})}},
               .outputs = {"f32[1,3,4,1]"}});
  t.push_back({.op = "Unsqueeze", .inputs = {"f32[3,-1]", "i64[1]"}, .values = {{1, I64s({1})}},
               .outputs = {"f32[3,1,-1]"}});
  t.push_back({.op = "Unsqueeze", .inputs = {"f32[]", "i64[1]"}, .values = {{1, I64s({0})}}, .outputs = {"f32[1]"}});
  t.push_back({.op = "Unsqueeze", .inputs = {"f32[3,4]", "i64[2]"}, .outputs = {"f32[-1,-1,-1,-1]"}});
  t.push_back({.op = "Unsqueeze", .inputs = {"f32[?]", "i64[1]"}, .values = {{1, I64s({0})}}, .outputs = {"f32[?]"}});
  t.push_back({.op = "Unsqueeze", .inputs = {"f32[3,4]", "i64[2]"}, .values = {{1, I64s({1, 1})}}, .outputs = {""},
               .error = "repeat axis 1"});
  t.push_back({.op = "Unsqueeze", .inputs = {"f32[3,4]", "i64[1]"}, .values = {{1, I64s({3})}}, .outputs = {""},
               .error = "axis 3 is out of range for rank 3"});
  t.push_back({.op = "Unsqueeze", .inputs = {"f32[3,4]"}, .outputs = {""}, .error = "has 1 inputs, expected 2"});
  t.push_back({.op = "Squeeze", .inputs = {"f32[1,3,1,4]"}, .outputs = {"f32[3,4]"}});
  t.push_back({.op = "Squeeze", .inputs = {"f32[1,3,1,4]", "i64[1]"}, .values = {{1, I64s({-2})}},
               .outputs = {"f32[1,3,4]"}});
  t.push_back({.op = "Squeeze", .inputs = {"f32[-1,3,1]", "i64[1]"}, .values = {{1, I64s({0})}},
               .outputs = {"f32[3,1]"}});
  // Without axes an unknown dim might be a 1: the rank is unknown.
  t.push_back({.op = "Squeeze", .inputs = {"f32[-1,3,1]"}, .outputs = {"f32[?]"}});
  t.push_back({.op = "Squeeze", .inputs = {"f32[1,3,1]", "i64[2]"}, .outputs = {"f32[-1]"}});
  t.push_back({.op = "Squeeze", .inputs = {"f32[?]", "i64[1]"}, .values = {{1, I64s({0})}}, .outputs = {"f32[?]"}});
  t.push_back({.op = "Squeeze", .inputs = {"f32[1,3]", "i64[1]"}, .values = {{1, I64s({1})}}, .outputs = {""},
               .error = "cannot squeeze axis 1 of shape [1,3]"});
}

void AddMiscCases(std::vector<InferCase>& t) {
  t.push_back({.op = "Shape", .inputs = {"f32[2,-1,4]"}, .outputs = {"i64[3]"}});
  t.push_back({.op = "Shape", .inputs = {"f32[2,3,4]"}, .attrs = {{"start", 1}}, .outputs = {"i64[2]"}});
  t.push_back({.op = "Shape", .inputs = {"f32[2,3,4]"}, .attrs = {{"start", -2}, {"end", -1}}, .outputs = {"i64[1]"}});
  t.push_back({.op = "Shape", .inputs = {"f32[2,3,4]"}, .attrs = {{"start", 5}, {"end", 9}}, .outputs = {"i64[0]"}});
  t.push_back({.op = "Shape", .inputs = {"f32[]"}, .outputs = {"i64[0]"}});
  t.push_back({.op = "Shape", .inputs = {"f32[?]"}, .outputs = {"i64[-1]"}});
  t.push_back({.op = "Size", .inputs = {"f32[2,-1]"}, .outputs = {"i64[]"}});
  t.push_back({.op = "Size", .inputs = {"string[?]"}, .outputs = {"i64[]"}});
  t.push_back({.op = "Size", .inputs = {"seq<f32[2]>"}, .outputs = {""}, .error = "a kind that T does not allow"});
  t.push_back({.op = "Shape", .inputs = {"f32[2]", "f32[2]"}, .outputs = {""}, .error = "has 2 inputs, expected 1"});
  t.push_back({.op = "Cast", .inputs = {"f32[2,-1]"}, .attrs = {{"to", 7}}, .outputs = {"i64[2,-1]"}});
  t.push_back({.op = "Cast", .inputs = {"i64[?]"}, .attrs = {{"to", 10}}, .outputs = {"f16[?]"}});
  t.push_back({.op = "Cast", .inputs = {"f32[2]"}, .attrs = {{"to", 99}}, .outputs = {""}, .error = "not a data type"});
  t.push_back({.op = "Cast", .inputs = {"f32[2]"}, .attrs = {{"to", (int64_t{1} << 32) + 1}}, .outputs = {""},
               .error = "not a data type"});
  t.push_back({.op = "Cast", .inputs = {"f32[2]"}, .outputs = {""}, .error = "missing required attribute 'to'"});
  t.push_back({.op = "ConstantOfShape", .inputs = {"i64[2]"}, .values = {{0, I64s({2, 3})}}, .outputs = {"f32[2,3]"}});
  t.push_back({.op = "ConstantOfShape", .inputs = {"i64[0]"}, .values = {{0, I64s({})}}, .outputs = {"f32[]"}});
  t.push_back({.op = "ConstantOfShape", .inputs = {"i64[3]"}, .attrs = {{"value", I64s({7})}},
               .outputs = {"i64[-1,-1,-1]"}});
  t.push_back({.op = "ConstantOfShape", .inputs = {"i64[-1]"}, .outputs = {"f32[?]"}});
  t.push_back({.op = "ConstantOfShape", .inputs = {"i64[2]"}, .values = {{0, I64s({2, -3})}}, .outputs = {""},
               .error = "negative dim -3"});
  t.push_back({.op = "ConstantOfShape", .inputs = {"i64[1]"}, .attrs = {{"value", I64s({1, 2})}}, .outputs = {""},
               .error = "must hold one element"});
  t.push_back({.op = "Expand", .inputs = {"f32[3,1]", "i64[3]"}, .values = {{1, I64s({2, 1, 6})}},
               .outputs = {"f32[2,3,6]"}});
  t.push_back({.op = "Expand", .inputs = {"f32[-1,1]", "i64[2]"}, .values = {{1, I64s({1, 4})}},
               .outputs = {"f32[-1,4]"}});
  // Unknown target values: the input's dims other than 1 survive.
  t.push_back({.op = "Expand", .inputs = {"f32[3,1]", "i64[3]"}, .outputs = {"f32[-1,3,-1]"}});
  t.push_back({.op = "Expand", .inputs = {"f32[3,1]", "i64[-1]"}, .outputs = {"f32[?]"}});
  t.push_back({.op = "Expand", .inputs = {"f32[3,2]", "i64[2]"}, .values = {{1, I64s({3, 4})}}, .outputs = {""},
               .error = "do not broadcast"});
}

}  // namespace

// GatherElements, ScatterElements, Trilu, CumSum, Range, EyeLike, CastLike,
// Tile, OneHot (indexing_ops.cc).
void AddIndexingCases(std::vector<InferCase>& t) {
  t.push_back({.op = "GatherElements", .inputs = {"f32[3,4]", "i64[3,2]"}, .outputs = {"f32[3,2]"}});
  t.push_back({.op = "GatherElements", .inputs = {"f32[-1,4]", "i64[-1,2]"}, .outputs = {"f32[-1,2]"}});
  t.push_back({.op = "GatherElements", .inputs = {"f32[3,4]", "i64[3]"}, .outputs = {""}, .error = "same rank"});
  t.push_back({.op = "ScatterElements", .inputs = {"f32[3,4]", "i64[1,2]", "f32[1,2]"}, .outputs = {"f32[3,4]"}});
  t.push_back({.op = "ScatterElements", .inputs = {"f32[-1,4]", "i32[1,2]", "f32[1,2]"}, .outputs = {"f32[-1,4]"}});
  t.push_back({.op = "ScatterElements", .inputs = {"f32[3,4]", "f32[1,2]", "f32[1,2]"}, .outputs = {""},
               .error = "dtype"});
  t.push_back({.op = "Trilu", .inputs = {"f32[3,4]"}, .outputs = {"f32[3,4]"}});
  t.push_back({.op = "Trilu", .inputs = {"f32[-1,4]", "i64[]"}, .outputs = {"f32[-1,4]"}});
  t.push_back({.op = "Trilu", .inputs = {"f32[3,4]", "f32[]"}, .outputs = {""}, .error = "dtype"});
  t.push_back({.op = "CumSum", .inputs = {"f32[3,4]", "i32[]"}, .outputs = {"f32[3,4]"}});
  t.push_back({.op = "CumSum", .inputs = {"i64[-1]", "i64[]"}, .outputs = {"i64[-1]"}});
  t.push_back({.op = "CumSum", .inputs = {"bool[3]", "i64[]"}, .outputs = {""}, .error = "dtype"});
  t.push_back({.op = "Range", .inputs = {"f32[]", "f32[]", "f32[]"},
               .values = {{0, Tensor::Scalar<float>(0)}, {1, Tensor::Scalar<float>(5)}, {2, Tensor::Scalar<float>(2)}},
               .outputs = {"f32[3]"}});
  t.push_back({.op = "Range", .inputs = {"i64[?]", "i64[]", "i64[]"}, .outputs = {"i64[-1]"}});
  t.push_back({.op = "Range", .inputs = {"i32[]", "i32[]", "i32[]"},
               .values = {{0, Tensor::Scalar<int32_t>(0)}, {1, Tensor::Scalar<int32_t>(5)}, {2, Tensor::Scalar<int32_t>(0)}},
               .outputs = {""}, .error = "delta is 0"});
  t.push_back({.op = "EyeLike", .inputs = {"f32[3,4]"}, .attrs = {{"dtype", 7}}, .outputs = {"i64[3,4]"}});
  t.push_back({.op = "EyeLike", .inputs = {"i32[-1,4]"}, .outputs = {"i32[-1,4]"}});
  t.push_back({.op = "EyeLike", .inputs = {"f32[3]"}, .outputs = {""}, .error = "2-D"});
  t.push_back({.op = "CastLike", .inputs = {"f32[3]", "i64[]"}, .outputs = {"i64[3]"}});
  t.push_back({.op = "CastLike", .inputs = {"f32[-1]", "f16[1]"}, .outputs = {"f16[-1]"}});
  t.push_back({.op = "CastLike", .inputs = {"f32[3]"}, .outputs = {""}, .error = "inputs"});
  t.push_back({.op = "Tile", .inputs = {"f32[2,3]", "i64[2]"}, .values = {{1, I64s({2, 1})}}, .outputs = {"f32[4,3]"}});
  t.push_back({.op = "Tile", .inputs = {"f32[-1,3]", "i64[2]"}, .values = {{1, I64s({2, 2})}},
               .outputs = {"f32[-1,6]"}});
  t.push_back({.op = "Tile", .inputs = {"f32[2,3]", "i64[1]"}, .values = {{1, I64s({2})}}, .outputs = {""},
               .error = "repeats has 1 values"});
  t.push_back({.op = "OneHot", .inputs = {"i64[2,3]", "i64[]", "f32[2]"}, .values = {{1, Tensor::Scalar<int64_t>(5)}},
               .outputs = {"f32[2,3,5]"}});
  t.push_back({.op = "OneHot", .inputs = {"i64[-1]", "i64[]", "f32[2]"}, .attrs = {{"axis", 0}},
               .outputs = {"f32[-1,-1]"}});
  t.push_back({.op = "OneHot", .inputs = {"i64[2]", "i64[]", "f32[2]"}, .attrs = {{"axis", 5}}, .outputs = {""},
               .error = "axis"});
}

// DepthToSpace, SpaceToDepth, GatherND (indexing_ops.cc); QuantizeLinear,
// DequantizeLinear and the windows (quantize_window_ops.cc).
void AddLayoutIndexCases(std::vector<InferCase>& t) {
  t.push_back({.op = "DepthToSpace", .inputs = {"f32[1,8,2,3]"}, .attrs = {{"blocksize", 2}}, .outputs = {"f32[1,2,4,6]"}});
  t.push_back({.op = "DepthToSpace", .inputs = {"f32[-1,8,2,3]"}, .attrs = {{"blocksize", 2}}, .outputs = {"f32[-1,2,4,6]"}});
  t.push_back({.op = "DepthToSpace", .inputs = {"f32[1,6,2,3]"}, .attrs = {{"blocksize", 2}}, .outputs = {""},
               .error = "not a multiple"});
  t.push_back({.op = "SpaceToDepth", .inputs = {"f32[1,2,4,6]"}, .attrs = {{"blocksize", 2}}, .outputs = {"f32[1,8,2,3]"}});
  t.push_back({.op = "SpaceToDepth", .inputs = {"f32[1,2,-1,6]"}, .attrs = {{"blocksize", 2}}, .outputs = {"f32[1,8,-1,3]"}});
  t.push_back({.op = "SpaceToDepth", .inputs = {"f32[1,2,5,6]"}, .attrs = {{"blocksize", 2}}, .outputs = {""},
               .error = "not a multiple"});
  t.push_back({.op = "GatherND", .inputs = {"f32[2,3,4]", "i64[5,2]"}, .outputs = {"f32[5,4]"}});
  t.push_back({.op = "GatherND", .inputs = {"f32[-1,3,4]", "i64[-1,1]"}, .outputs = {"f32[-1,3,4]"}});
  t.push_back({.op = "GatherND", .inputs = {"f32[2,3]", "i64[5,3]"}, .outputs = {""}, .error = "do not fit"});
  t.push_back({.op = "QuantizeLinear", .inputs = {"f32[2,3]", "f32[]"}, .outputs = {"u8[2,3]"}});
  t.push_back({.op = "QuantizeLinear", .inputs = {"f32[-1,3]", "f32[3]", "i8[3]"}, .outputs = {"i8[-1,3]"}});
  t.push_back({.op = "QuantizeLinear", .inputs = {"f32[2]", "f32[]", "i32[]"}, .outputs = {""}, .error = "dtype"});
  t.push_back({.op = "DequantizeLinear", .inputs = {"u8[2,3]", "f32[]", "u8[]"}, .outputs = {"f32[2,3]"}});
  t.push_back({.op = "DequantizeLinear", .inputs = {"i8[-1]", "f32[]"}, .outputs = {"f32[-1]"}});
  t.push_back({.op = "DequantizeLinear", .inputs = {"i8[2]", "f32[]", "u8[]"}, .outputs = {""}, .error = "dtype"});
  for (const char* window : {"HannWindow", "HammingWindow", "BlackmanWindow"}) {
    t.push_back({.op = window, .inputs = {"i64[]"}, .values = {{0, Tensor::Scalar<int64_t>(10)}}, .outputs = {"f32[10]"}});
    t.push_back({.op = window, .inputs = {"i32[?]"}, .attrs = {{"output_datatype", 11}}, .outputs = {"f64[-1]"}});
    t.push_back({.op = window, .inputs = {"i64[]"}, .values = {{0, Tensor::Scalar<int64_t>(-1)}}, .outputs = {""},
                 .error = "negative"});
  }
}

// NegativeLogLikelihoodLoss and SoftmaxCrossEntropyLoss (loss_ops.cc).
void AddLossCases(std::vector<InferCase>& t) {
  const std::string none = "none";
  t.push_back({.op = "NegativeLogLikelihoodLoss", .inputs = {"f32[2,3,4]", "i64[2,4]"}, .outputs = {"f32[]"}});
  t.push_back({.op = "NegativeLogLikelihoodLoss", .inputs = {"f32[-1,3]", "i64[-1]", "f32[3]"},
               .attrs = {{"reduction", none}}, .outputs = {"f32[-1]"}});
  t.push_back({.op = "NegativeLogLikelihoodLoss", .inputs = {"f32[2,3]", "i64[2,3]"}, .outputs = {""},
               .error = "one dim less"});
  t.push_back({.op = "SoftmaxCrossEntropyLoss", .inputs = {"f32[2,3]", "i64[2]"}, .outputs = {"f32[]", "f32[2,3]"}});
  t.push_back({.op = "SoftmaxCrossEntropyLoss", .inputs = {"f32[-1,3]", "i32[-1]"}, .attrs = {{"reduction", none}},
               .outputs = {"f32[-1]", "f32[-1,3]"}});
  t.push_back({.op = "SoftmaxCrossEntropyLoss", .inputs = {"f32[2,3]", "i64[2]"},
               .attrs = {{"reduction", std::string("avg")}}, .outputs = {""}, .error = "reduction"});
}

// TopK, ScatterND, ReverseSequence, Resize (indexing_ops.cc).
void AddSelectionCases(std::vector<InferCase>& t) {
  t.push_back({.op = "GridSample", .inputs = {"f32[1,3,4,4]", "f32[1,6,5,2]"}, .outputs = {"f32[1,3,6,5]"}});
  t.push_back({.op = "GridSample", .inputs = {"f32[-1,3,-1,-1]", "f32[2,-1,5,2]"}, .outputs = {"f32[2,3,-1,5]"}});
  t.push_back({.op = "GridSample", .inputs = {"f32[1,3,4,4]", "f32[1,6,5,3]"}, .outputs = {""},
               .error = "Grid must be [N, H_out, W_out, 2]"});
  t.push_back({.op = "GridSample", .inputs = {"f32[1,3,4,4]", "f32[1,6,5,2]"}, .attrs = {{"mode", "area"}},
               .outputs = {""}, .error = "mode 'area'"});
  t.push_back({.op = "Compress", .inputs = {"f32[3,2]", "bool[3]"}, .attrs = {{"axis", 0}}, .outputs = {"f32[-1,2]"}});
  t.push_back({.op = "Compress", .inputs = {"f32[-1,2]", "bool[-1]"}, .outputs = {"f32[-1]"}});
  t.push_back({.op = "Compress", .inputs = {"f32[3,2]", "bool[3,1]"}, .outputs = {""}, .error = "condition must be 1-D"});
  t.push_back({.op = "Compress", .inputs = {"f32[3,2]", "bool[3]"}, .attrs = {{"axis", 2}}, .outputs = {""},
               .error = "out of range"});
  t.push_back({.op = "Unique", .inputs = {"f32[6]"}, .outputs = {"f32[-1]", "i64[-1]", "i64[-1]", "i64[-1]"}});
  t.push_back({.op = "Unique", .inputs = {"i64[-1,3,4]"}, .attrs = {{"axis", -1}},
               .outputs = {"i64[-1,3,-1]", "i64[-1]", "i64[-1]", "i64[-1]"}});
  t.push_back({.op = "Unique", .inputs = {"f32[2,3]"}, .attrs = {{"axis", 2}}, .outputs = {"", "", "", ""},
               .error = "out of range"});
  t.push_back({.op = "NonMaxSuppression", .inputs = {"f32[1,6,4]", "f32[1,2,6]", "i64[1]", "f32[1]", "f32[1]"},
               .outputs = {"i64[-1,3]"}});
  t.push_back({.op = "NonMaxSuppression", .inputs = {"f32[-1,-1,4]", "f32[-1,3,-1]"}, .outputs = {"i64[-1,3]"}});
  t.push_back({.op = "NonMaxSuppression", .inputs = {"f32[1,6,5]", "f32[1,2,6]"}, .outputs = {""},
               .error = "boxes must be [batches, boxes, 4]"});
  t.push_back({.op = "NonMaxSuppression", .inputs = {"f32[1,6,4]", "f32[1,2,5]"}, .outputs = {""},
               .error = "disagree on the batch or box count"});
  t.push_back({.op = "Pad", .inputs = {"f32[1,3,4,5]", "i64[8]"}, .values = {{1, I64s({0, 0, 1, 3, 0, 0, 2, 4})}},
               .outputs = {"f32[1,3,7,12]"}});
  t.push_back({.op = "Pad", .inputs = {"i32[4,5]", "i64[4]", "i32[]"}, .values = {{1, I64s({-1, 0, 0, -2})}},
               .outputs = {"i32[3,3]"}});
  t.push_back({.op = "Pad", .inputs = {"f32[-1,5]", "i64[4]"}, .values = {{1, I64s({1, 1, 1, 1})}},
               .outputs = {"f32[-1,7]"}});
  t.push_back({.op = "Pad", .inputs = {"f32[2,5]", "i64[4]"}, .outputs = {"f32[-1,-1]"}});
  t.push_back({.op = "Pad", .inputs = {"f32[2,5]", "i64[3]"}, .outputs = {""}, .error = "pads has 3 values, expected 4"});
  t.push_back({.op = "Pad", .inputs = {"f32[2,5]", "i64[4]"}, .attrs = {{"mode", "mirror"}}, .outputs = {""},
               .error = "mode 'mirror'"});
  t.push_back({.op = "Pad", .inputs = {"f32[2,5]", "i64[4]"}, .values = {{1, I64s({0, 0, -3, 0})}}, .outputs = {""},
               .error = "crop dim 0"});
  t.push_back({.op = "TopK", .inputs = {"f32[3,4]", "i64[1]"}, .values = {{1, I64s({2})}},
               .outputs = {"f32[3,2]", "i64[3,2]"}});
  t.push_back({.op = "TopK", .inputs = {"f32[3,4]", "i64[1]"}, .attrs = {{"axis", 0}}, .values = {{1, I64s({3})}},
               .outputs = {"f32[3,4]", "i64[3,4]"}});
  t.push_back({.op = "TopK", .inputs = {"f32[-1,4]", "i64[1]"}, .attrs = {{"axis", 0}}, .outputs = {"f32[-1,4]", "i64[-1,4]"}});
  t.push_back({.op = "TopK", .inputs = {"f32[?]", "i64[1]"}, .outputs = {"f32[?]", "i64[?]"}});
  t.push_back({.op = "TopK", .inputs = {"f32[3,4]", "i64[1]"}, .values = {{1, I64s({5})}}, .outputs = {"", ""},
               .error = "K = 5 exceeds dim 1"});
  t.push_back({.op = "TopK", .inputs = {"f32[3,4]", "i64[1]"}, .attrs = {{"axis", 2}}, .outputs = {"", ""},
               .error = "axis 2 is out of range"});
  t.push_back({.op = "ScatterND", .inputs = {"f32[4,5]", "i64[2,1]", "f32[2,5]"}, .outputs = {"f32[4,5]"}});
  t.push_back({.op = "ScatterND", .inputs = {"f32[-1,5]", "i64[-1,1]", "f32[-1,5]"}, .outputs = {"f32[-1,5]"}});
  t.push_back({.op = "ScatterND", .inputs = {"f32[4,5]", "i64[2,1]", "i32[2,5]"}, .outputs = {""},
               .error = "input 2 (updates) has dtype i32 but T is f32"});
  t.push_back({.op = "ReverseSequence", .inputs = {"f32[4,2,3]", "i64[2]"}, .outputs = {"f32[4,2,3]"}});
  t.push_back({.op = "ReverseSequence", .inputs = {"f32[-1,-1,3]", "i64[-1]"}, .outputs = {"f32[-1,-1,3]"}});
  t.push_back({.op = "ReverseSequence", .inputs = {"f32[4,2,3]", "i32[2]"}, .outputs = {""},
               .error = "input 1 (sequence_lens) has dtype i32, expected i64"});
  // Resize: sizes win over scales; scales give floor(dim * scale).
  t.push_back({.op = "Resize", .inputs = {"f32[1,1,2,2]", "", "f32[4]"}, .values = {{2, F32s({1, 1, 2, 3})}},
               .outputs = {"f32[1,1,4,6]"}});
  t.push_back({.op = "Resize", .inputs = {"f32[1,1,2,2]", "", "", "i64[4]"}, .values = {{3, I64s({1, 1, 3, 5})}},
               .outputs = {"f32[1,1,3,5]"}});
  t.push_back({.op = "Resize", .inputs = {"f32[-1,3,4,4]", "", "f32[4]"}, .values = {{2, F32s({1, 1, 0.5f, 0.5f})}},
               .outputs = {"f32[-1,3,2,2]"}});
  t.push_back({.op = "Resize", .inputs = {"f32[1,3,4,4]", "", "f32[4]"}, .outputs = {"f32[-1,-1,-1,-1]"}});
  t.push_back({.op = "Resize", .inputs = {"f32[?]", "", "f32[4]"}, .outputs = {"f32[?]"}});
  t.push_back({.op = "Resize", .inputs = {"f32[1,1,2,2]", "", "f32[2]"}, .values = {{2, F32s({2, 2})}},
               .outputs = {""}, .error = "scales has 2 values"});
  t.push_back({.op = "Resize", .inputs = {"f32[1,1,2,2]", "", "f32[4]"}, .values = {{2, F32s({1, 1, 0, 2})}},
               .outputs = {""}, .error = "scales[2] must be positive"});
  t.push_back({.op = "Resize", .inputs = {"f32[1,1,2,2]", "", "", "i64[4]"}, .values = {{3, I64s({1, 1, -3, 5})}},
               .outputs = {""}, .error = "sizes[2] is negative"});
}

const std::vector<InferCase>& TensorCases() {
  static const auto* cases = [] {
    auto* t = new std::vector<InferCase>();
    AddReshapeCases(*t);
    AddLayoutCases(*t);
    AddSliceGatherCases(*t);
    AddSqueezeCases(*t);
    AddMiscCases(*t);
    AddIndexingCases(*t);
    AddLossCases(*t);
    AddLayoutIndexCases(*t);
    AddSelectionCases(*t);
    return t;
  }();
  return *cases;
}

TEST(TensorOpsTest, Inference) { RunCases(TensorCases()); }

TEST(TensorOpsTest, ValueInputsAndViews) {
  const OpRegistry& r = OpRegistry::Global();
  EXPECT_EQ(r.Find("Reshape")->value_inputs, std::vector<int>{1});
  EXPECT_EQ(r.Find("Slice")->value_inputs, (std::vector<int>{1, 2, 3, 4}));
  EXPECT_EQ(r.Find("ConstantOfShape")->value_inputs, std::vector<int>{0});
  EXPECT_TRUE(r.Find("Gather")->value_inputs.empty());
  using Pairs = std::vector<std::pair<int, int>>;
  for (const char* op : {"Reshape", "Squeeze", "Unsqueeze"}) {
    EXPECT_EQ(r.Find(op)->views, (Pairs{{0, 0}})) << op;
  }
}

// Values of inputs that are not value inputs never reach the inference, so
// an op cannot come to depend on them by accident.
TEST(TensorOpsTest, OnlyValueInputsArePassed) {
  ir::OpDesc op("n", "Reshape");
  op.AddInput({"", ir::ValueType::Tensor(DataType::kInt64, Shape{2})});
  op.AddInput({"", ir::ValueType::Tensor(DataType::kInt64, Shape{1})});
  op.AddOutput({});
  const ir::ValueType data = op.input(0).type, shape = op.input(1).type;
  const Tensor data_value = I64s({1, 2});
  const Tensor shape_value = I64s({2});
  auto result = InferOutputTypes(op, {&data, &shape}, {&data_value, &shape_value});
  ASSERT_TRUE(result.ok()) << result.status();
  EXPECT_EQ((*result)[0].ToString(), "i64[2]");
  auto without = InferOutputTypes(op, {&data, &shape}, {&data_value});
  ASSERT_TRUE(without.ok()) << without.status();
  EXPECT_EQ((*without)[0].ToString(), "i64[-1]");
}

}  // namespace ge::ops::testing
