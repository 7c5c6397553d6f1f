// Shape inference of the neural-network ops: Conv, pooling, normalization,
// softmax, Dropout, Gemm, MatMul, Flatten.
#include "gtest/gtest.h"
#include "tests/unit/base/ops/op_test_util.h"

namespace ge::ops::testing {
namespace {

using Ints = std::vector<int64_t>;

void AddConvCases(std::vector<InferCase>& t) {
  t.push_back({.op = "Conv", .inputs = {"f32[1,3,224,224]", "f32[64,3,7,7]", "f32[64]"},
               .attrs = {{"strides", Ints{2, 2}}, {"pads", Ints{3, 3, 3, 3}}},
               .outputs = {"f32[1,64,112,112]"}});
  t.push_back({.op = "Conv", .inputs = {"f32[1,3,5,5]", "f32[8,3,3,3]"},
               .attrs = {{"auto_pad", "SAME_UPPER"}, {"strides", Ints{2, 2}}}, .outputs = {"f32[1,8,3,3]"}});
  t.push_back({.op = "Conv", .inputs = {"f32[1,3,6,6]", "f32[8,3,3,3]"},
               .attrs = {{"auto_pad", "SAME_LOWER"}}, .outputs = {"f32[1,8,6,6]"}});
  t.push_back({.op = "Conv", .inputs = {"f32[1,3,5,5]", "f32[8,3,3,3]"},
               .attrs = {{"auto_pad", "VALID"}, {"strides", Ints{2, 2}}}, .outputs = {"f32[1,8,2,2]"}});
  t.push_back({.op = "Conv", .inputs = {"f32[1,1,7,7]", "f32[1,1,3,3]"},
               .attrs = {{"dilations", Ints{2, 2}}}, .outputs = {"f32[1,1,3,3]"}});
  t.push_back({.op = "Conv", .inputs = {"f32[1,4,5,5]", "f32[6,2,3,3]"}, .attrs = {{"group", 2}},
               .outputs = {"f32[1,6,3,3]"}});
  t.push_back({.op = "Conv", .inputs = {"f32[2,3,10]", "f32[4,3,3]"}, .outputs = {"f32[2,4,8]"}});
  t.push_back({.op = "Conv", .inputs = {"f32[-1,3,-1,32]", "f32[16,3,3,3]"},
               .attrs = {{"pads", Ints{1, 1, 1, 1}}}, .outputs = {"f32[-1,16,-1,32]"}});
  t.push_back({.op = "Conv", .inputs = {"f32[-1,3,-1,-1]", "f32[16,3,3,3]", "f32[-1]"},
               .attrs = {{"kernel_shape", Ints{3, 3}}}, .outputs = {"f32[-1,16,-1,-1]"}});
  t.push_back({.op = "Conv", .inputs = {"f32[?]", "f32[16,3,3,3]"}, .outputs = {"f32[-1,16,-1,-1]"}});
  t.push_back({.op = "Conv", .inputs = {"f32[?]", "f32[?]"}, .outputs = {"f32[?]"}});
  // A bias of unknown length learns M from W.
  t.push_back({.op = "Conv", .inputs = {"f32[1,3,4,4]", "f32[-1,3,1,1]", "f32[5]"}, .outputs = {"f32[1,5,4,4]"}});
  t.push_back({.op = "Conv", .inputs = {"f32[1,4,5,5]", "f32[8,3,3,3]"}, .outputs = {""},
               .error = "has 4 channels"});
  t.push_back({.op = "Conv", .inputs = {"f32[1,3,5,5]", "f32[8,3,3,3]", "f32[7]"}, .outputs = {""},
               .error = "input 2 has shape [7] but the channel count is 8"});
  t.push_back({.op = "Conv", .inputs = {"f32[1,3,5,5]", "f32[8,3,3,3]"}, .attrs = {{"pads", Ints{1, 1}}},
               .outputs = {""}, .error = "pads [1,1] has 2 values, expected 4"});
  t.push_back({.op = "Conv", .inputs = {"f32[1,3,2,2]", "f32[8,3,3,3]"}, .outputs = {""},
               .error = "smaller than the dilated kernel"});
  t.push_back({.op = "Conv", .inputs = {"f32[1,3,5,5]", "f32[8,3,3,3]"}, .attrs = {{"auto_pad", "FOO"}},
               .outputs = {""}, .error = "auto_pad 'FOO'"});
  t.push_back({.op = "Conv", .inputs = {"f32[1,8,5,5]", "f32[6,2,3,3]"}, .attrs = {{"group", 4}},
               .outputs = {""}, .error = "not divisible by group 4"});
  t.push_back({.op = "Conv", .inputs = {"f32[1,3,5,5]", "f64[8,3,3,3]"}, .outputs = {""},
               .error = "input 1 (W) has dtype f64 but T is f32"});
  t.push_back({.op = "Conv", .inputs = {"f32[1,3,5,5]", "f32[8,3,3]"}, .outputs = {""}, .error = "differ in rank"});
  t.push_back({.op = "Conv", .inputs = {"f32[1,3,5,5]", "f32[8,3,3,3]"}, .attrs = {{"kernel_shape", Ints{2, 2}}},
               .outputs = {""}, .error = "contradicts W"});
}

void AddConvTransposeCases(std::vector<InferCase>& t) {
  const char* op = "ConvTranspose";
  t.push_back({.op = op, .inputs = {"f32[1,1,3,3]", "f32[1,2,3,3]"}, .outputs = {"f32[1,2,5,5]"}});
  t.push_back({.op = op, .inputs = {"f32[1,1,3,3]", "f32[1,2,3,3]", "f32[2]"},
               .attrs = {{"strides", Ints{3, 2}}, {"output_padding", Ints{1, 1}}}, .outputs = {"f32[1,2,10,8]"}});
  t.push_back({.op = op, .inputs = {"f32[1,1,3,3]", "f32[1,2,3,3]"},
               .attrs = {{"strides", Ints{3, 2}}, {"output_shape", Ints{10, 8}}}, .outputs = {"f32[1,2,10,8]"}});
  t.push_back({.op = op, .inputs = {"f32[1,1,3,3]", "f32[1,2,3,3]"},
               .attrs = {{"strides", Ints{2, 2}}, {"auto_pad", "SAME_UPPER"}}, .outputs = {"f32[1,2,6,6]"}});
  t.push_back({.op = op, .inputs = {"f32[1,1,3,3]", "f32[1,2,3,3]"},
               .attrs = {{"strides", Ints{3, 2}}, {"pads", Ints{1, 2, 1, 2}}}, .outputs = {"f32[1,2,7,3]"}});
  t.push_back({.op = op, .inputs = {"f32[1,1,3,3]", "f32[1,1,2,2]"}, .attrs = {{"dilations", Ints{2, 2}}},
               .outputs = {"f32[1,1,5,5]"}});
  t.push_back({.op = op, .inputs = {"f32[2,4,5]", "f32[4,3,3]"}, .attrs = {{"group", 2}},
               .outputs = {"f32[2,6,7]"}});
  t.push_back({.op = op, .inputs = {"f32[-1,4,-1,5]", "f32[4,3,3,3]"}, .outputs = {"f32[-1,3,-1,7]"}});
  t.push_back({.op = op, .inputs = {"f32[?]", "f32[4,3,3,3]"}, .outputs = {"f32[-1,3,-1,-1]"}});
  t.push_back({.op = op, .inputs = {"f32[1,3,5,5]", "f32[4,3,3,3]"}, .outputs = {""},
               .error = "expects 4"});
  t.push_back({.op = op, .inputs = {"f32[1,1,3,3]", "f32[1,2,3,3]", "f32[3]"}, .outputs = {""},
               .error = "input 2 has shape [3] but the channel count is 2"});
  t.push_back({.op = op, .inputs = {"f32[1,1,3,3]", "f32[1,2,3,3]"}, .attrs = {{"output_padding", Ints{1, 1}}},
               .outputs = {""}, .error = "output_padding 1 must be in [0, max(stride, dilation))"});
  t.push_back({.op = op, .inputs = {"f32[1,1,3,3]", "f32[1,2,3,3]"}, .attrs = {{"pads", Ints{3, 3, 3, 3}}},
               .outputs = {""}, .error = "negative output size"});
}

void AddUnpoolRoiEinsumCases(std::vector<InferCase>& t) {
  const Ints k2{2, 2};
  t.push_back({.op = "MaxUnpool", .inputs = {"f32[1,1,2,2]", "i64[1,1,2,2]"},
               .attrs = {{"kernel_shape", k2}, {"strides", k2}}, .outputs = {"f32[1,1,4,4]"}});
  t.push_back({.op = "MaxUnpool", .inputs = {"f32[1,1,2,2]", "i64[1,1,2,2]", "i64[4]"},
               .attrs = {{"kernel_shape", k2}, {"strides", k2}}, .values = {{2, I64s({1, 1, 5, 5})}},
               .outputs = {"f32[1,1,5,5]"}});
  t.push_back({.op = "MaxUnpool", .inputs = {"f32[-1,3,2,-1]", "i64[-1,3,2,-1]"},
               .attrs = {{"kernel_shape", k2}, {"strides", k2}}, .outputs = {"f32[-1,3,4,-1]"}});
  t.push_back({.op = "MaxUnpool", .inputs = {"f32[1,1,2]", "i64[1,1,2]"}, .attrs = {{"kernel_shape", k2}},
               .outputs = {""}, .error = "needs rank 4"});
  t.push_back({.op = "RoiAlign", .inputs = {"f32[1,1,10,10]", "f32[3,4]", "i64[3]"},
               .attrs = {{"output_height", 5}, {"output_width", 5}}, .outputs = {"f32[3,1,5,5]"}});
  t.push_back({.op = "RoiAlign", .inputs = {"f32[-1,4,-1,-1]", "f32[-1,4]", "i64[-1]"},
               .outputs = {"f32[-1,4,1,1]"}});
  t.push_back({.op = "RoiAlign", .inputs = {"f32[1,1,10,10]", "f32[3,5]", "i64[3]"}, .outputs = {""},
               .error = "rois must be [num_rois, 4]"});
  t.push_back({.op = "Einsum", .inputs = {"f32[2,3,4]", "f32[2,4,5]"}, .attrs = {{"equation", "bij,bjk->bik"}},
               .outputs = {"f32[2,3,5]"}});
  t.push_back({.op = "Einsum", .inputs = {"f64[3,5,5]"}, .attrs = {{"equation", "...ii ->...i"}},
               .outputs = {"f64[3,5]"}});
  t.push_back({.op = "Einsum", .inputs = {"f32[5]", "f32[5]"}, .attrs = {{"equation", "i,i"}}, .outputs = {"f32[]"}});
  t.push_back({.op = "Einsum", .inputs = {"f32[3,4]"}, .attrs = {{"equation", "ij"}}, .outputs = {"f32[3,4]"}});
  t.push_back({.op = "Einsum", .inputs = {"f32[-1,4]", "f32[4,-1]"}, .attrs = {{"equation", "ij,jk->ki"}},
               .outputs = {"f32[-1,-1]"}});
  t.push_back({.op = "Einsum", .inputs = {"f32[3,4]", "f32[5,6]"}, .attrs = {{"equation", "ij,jk->ik"}},
               .outputs = {""}, .error = "label 'j' has sizes 4 and 5"});
  t.push_back({.op = "Einsum", .inputs = {"f32[3,4]"}, .attrs = {{"equation", "ijk->i"}}, .outputs = {""},
               .error = "does not match an input of rank 2"});
}

void AddDetCases(std::vector<InferCase>& t) {
  t.push_back({.op = "Det", .inputs = {"f32[3,3]"}, .outputs = {"f32[]"}});
  t.push_back({.op = "Det", .inputs = {"f32[2,-1,3,3]"}, .outputs = {"f32[2,-1]"}});
  t.push_back({.op = "Det", .inputs = {"f32[2,3,4]"}, .outputs = {""}, .error = "is not square"});
  t.push_back({.op = "Det", .inputs = {"f32[3]"}, .outputs = {""}, .error = "must be [*, M, M]"});
}

void AddPoolCases(std::vector<InferCase>& t) {
  for (const char* op : {"MaxPool", "AveragePool"}) {
    t.push_back({.op = op, .inputs = {"f32[1,3,32,32]"},
                 .attrs = {{"kernel_shape", Ints{2, 2}}, {"strides", Ints{2, 2}}}, .outputs = {"f32[1,3,16,16]"}});
    t.push_back({.op = op, .inputs = {"f32[1,1,5,5]"},
                 .attrs = {{"kernel_shape", Ints{2, 2}}, {"strides", Ints{2, 2}}, {"ceil_mode", 1}},
                 .outputs = {"f32[1,1,3,3]"}});
    // With ceil_mode, a last window that would start in the end pad is dropped.
    t.push_back({.op = op, .inputs = {"f32[1,1,4,4]"},
                 .attrs = {{"kernel_shape", Ints{2, 2}}, {"strides", Ints{2, 2}},
                           {"pads", Ints{0, 0, 1, 1}}, {"ceil_mode", 1}},
                 .outputs = {"f32[1,1,2,2]"}});
    t.push_back({.op = op, .inputs = {"f32[1,1,5,5]"},
                 .attrs = {{"kernel_shape", Ints{3, 3}}, {"strides", Ints{2, 2}}, {"auto_pad", "SAME_UPPER"}},
                 .outputs = {"f32[1,1,3,3]"}});
    t.push_back({.op = op, .inputs = {"f32[-1,3,-1,8]"}, .attrs = {{"kernel_shape", Ints{2, 2}}, {"strides", Ints{2, 2}}},
                 .outputs = {"f32[-1,3,-1,4]"}});
    t.push_back({.op = op, .inputs = {"f32[?]"}, .attrs = {{"kernel_shape", Ints{3}}}, .outputs = {"f32[-1,-1,-1]"}});
    t.push_back({.op = op, .inputs = {"f32[1,3,8,8]"}, .outputs = {""},
                 .error = "missing required attribute 'kernel_shape'"});
    t.push_back({.op = op, .inputs = {"f32[1,3,8]"}, .attrs = {{"kernel_shape", Ints{2, 2}}}, .outputs = {""},
                 .error = "needs rank 4"});
    t.push_back({.op = op, .inputs = {"f32[1,3,8,8]"}, .attrs = {{"kernel_shape", Ints{2, 2}}, {"strides", Ints{0, 1}}},
                 .outputs = {""}, .error = "strides [0,1] has a value below 1"});
  }
  t.push_back({.op = "MaxPool", .inputs = {"f32[1,1,7,7]"},
               .attrs = {{"kernel_shape", Ints{3, 3}}, {"dilations", Ints{2, 2}}},
               .outputs = {"f32[1,1,3,3]", "i64[1,1,3,3]"}});
  t.push_back({.op = "MaxPool", .inputs = {"i8[1,1,4,4]"}, .attrs = {{"kernel_shape", Ints{2, 2}}},
               .outputs = {"i8[1,1,3,3]"}});
  t.push_back({.op = "AveragePool", .inputs = {"i8[1,1,4,4]"}, .attrs = {{"kernel_shape", Ints{2, 2}}},
               .outputs = {""}, .error = "not allowed for T"});
  t.push_back({.op = "AveragePool", .inputs = {"f32[1,1,4,4]"},
               .attrs = {{"kernel_shape", Ints{2, 2}}, {"dilations", Ints{1, 1}}}, .outputs = {""},
               .error = "unknown attribute 'dilations'"});
  for (const char* op : {"GlobalAveragePool", "GlobalMaxPool"}) {
    t.push_back({.op = op, .inputs = {"f32[2,3,7,7]"}, .outputs = {"f32[2,3,1,1]"}});
    t.push_back({.op = op, .inputs = {"f32[-1,3,-1,-1,-1]"}, .outputs = {"f32[-1,3,1,1,1]"}});
    t.push_back({.op = op, .inputs = {"f32[?]"}, .outputs = {"f32[?]"}});
    t.push_back({.op = op, .inputs = {"f32[3]"}, .outputs = {""}, .error = "needs rank >= 2"});
  }
}

void AddNormalizationCases(std::vector<InferCase>& t) {
  t.push_back({.op = "BatchNormalization", .inputs = {"f32[2,3,4,4]", "f32[3]", "f32[3]", "f32[3]", "f32[3]"},
               .outputs = {"f32[2,3,4,4]"}});
  t.push_back({.op = "BatchNormalization", .inputs = {"f32[2,3,4,4]", "f32[3]", "f32[3]", "f32[3]", "f32[3]"},
               .attrs = {{"training_mode", 1}}, .outputs = {"f32[2,3,4,4]", "f32[3]", "f32[3]"}});
  // The 1-D inputs pin down an unknown channel dim.
  t.push_back({.op = "BatchNormalization", .inputs = {"f32[-1,-1,4]", "f32[3]", "f32[-1]", "f32[-1]", "f32[-1]"},
               .outputs = {"f32[-1,3,4]"}});
  t.push_back({.op = "BatchNormalization", .inputs = {"f32[?]", "f32[3]", "f32[3]", "f32[3]", "f32[3]"},
               .outputs = {"f32[?]"}});
  t.push_back({.op = "BatchNormalization", .inputs = {"f32[2,3,4,4]", "f32[4]", "f32[3]", "f32[3]", "f32[3]"},
               .outputs = {""}, .error = "input 1 has shape [4] but the channel count is 3"});
  t.push_back({.op = "BatchNormalization", .inputs = {"f32[2,3,4,4]", "f32[3]", "f32[3]", "f32[3]"},
               .outputs = {""}, .error = "has 4 inputs, expected 5"});
  t.push_back({.op = "LayerNormalization", .inputs = {"f32[2,5,8]", "f32[8]", "f32[8]"},
               .outputs = {"f32[2,5,8]", "f32[2,5,1]", "f32[2,5,1]"}});
  t.push_back({.op = "LayerNormalization", .inputs = {"f32[2,5,8]", "f32[5,8]"}, .attrs = {{"axis", 1}},
               .outputs = {"f32[2,5,8]", "f32[2,1,1]"}});
  t.push_back({.op = "LayerNormalization", .inputs = {"f16[2,-1,8]", "f16[8]"},
               .outputs = {"f16[2,-1,8]", "f32[2,-1,1]", "f32[2,-1,1]"}});
  t.push_back({.op = "LayerNormalization", .inputs = {"f32[?]", "f32[8]"}, .outputs = {"f32[?]", "f32[?]"}});
  t.push_back({.op = "LayerNormalization", .inputs = {"f32[2,5,8]", "f32[8]"}, .attrs = {{"axis", 3}},
               .outputs = {""}, .error = "axis 3 is out of range for rank 3"});
  t.push_back({.op = "LayerNormalization", .inputs = {"f32[2,5,8]", "f32[7]"}, .outputs = {""},
               .error = "input 1 (Scale)"});
  t.push_back({.op = "InstanceNormalization", .inputs = {"f32[2,3,4,4]", "f32[3]", "f32[3]"}, .outputs = {"f32[2,3,4,4]"}});
  t.push_back({.op = "InstanceNormalization", .inputs = {"f32[-1,3,-1]", "f32[3]", "f32[3]"}, .outputs = {"f32[-1,3,-1]"}});
  t.push_back({.op = "InstanceNormalization", .inputs = {"i32[2,3,4]", "i32[3]", "i32[3]"}, .outputs = {""},
               .error = "not allowed for T"});
  t.push_back({.op = "LRN", .inputs = {"f32[1,5,4,4]"}, .attrs = {{"size", 3}}, .outputs = {"f32[1,5,4,4]"}});
  t.push_back({.op = "LRN", .inputs = {"f32[-1,5,-1,-1]"}, .attrs = {{"size", 3}}, .outputs = {"f32[-1,5,-1,-1]"}});
  t.push_back({.op = "LRN", .inputs = {"f32[1,5,4,4]"}, .outputs = {""}, .error = "missing required attribute 'size'"});
  for (const char* op : {"Softmax", "LogSoftmax", "Hardmax"}) {
    t.push_back({.op = op, .inputs = {"f32[2,3]"}, .outputs = {"f32[2,3]"}});
    t.push_back({.op = op, .inputs = {"f32[-1,3]"}, .attrs = {{"axis", 0}}, .outputs = {"f32[-1,3]"}});
    t.push_back({.op = op, .inputs = {"f32[?]"}, .attrs = {{"axis", 5}}, .outputs = {"f32[?]"}});
    t.push_back({.op = op, .inputs = {"f32[2,3]"}, .attrs = {{"axis", 2}}, .outputs = {""},
                 .error = "axis 2 is out of range for rank 2"});
  }
  t.push_back({.op = "Dropout", .inputs = {"f32[2,3]"}, .outputs = {"f32[2,3]"}});
  t.push_back({.op = "Dropout", .inputs = {"f32[2,-1]", "f32[]", "bool[]"}, .outputs = {"f32[2,-1]", "bool[2,-1]"}});
  t.push_back({.op = "Dropout", .inputs = {"f32[?]"}, .outputs = {"f32[?]", "bool[?]"}});
  t.push_back({.op = "Dropout", .inputs = {"f32[2]", "f32[2]"}, .outputs = {""},
               .error = "input 1 (ratio) must be a scalar"});
  t.push_back({.op = "Dropout", .inputs = {"f32[2]", "", "f32[]"}, .outputs = {""},
               .error = "input 2 (training_mode) has dtype f32, expected bool"});
}

void AddMatrixCases(std::vector<InferCase>& t) {
  t.push_back({.op = "Gemm", .inputs = {"f32[4,5]", "f32[5,6]"}, .outputs = {"f32[4,6]"}});
  t.push_back({.op = "Gemm", .inputs = {"f32[5,4]", "f32[6,5]", "f32[6]"},
               .attrs = {{"transA", 1}, {"transB", 1}}, .outputs = {"f32[4,6]"}});
  t.push_back({.op = "Gemm", .inputs = {"f32[4,5]", "f32[5,6]", "f32[4,1]"}, .outputs = {"f32[4,6]"}});
  t.push_back({.op = "Gemm", .inputs = {"f32[-1,5]", "f32[5,-1]", "f32[]"}, .outputs = {"f32[-1,-1]"}});
  t.push_back({.op = "Gemm", .inputs = {"f32[?]", "f32[5,6]"}, .outputs = {"f32[-1,6]"}});
  t.push_back({.op = "Gemm", .inputs = {"f32[4,5]", "f32[5,6]", "f32[5]"}, .outputs = {""},
               .error = "input 2 (C): shape [5] cannot broadcast to [4,6]"});
  t.push_back({.op = "Gemm", .inputs = {"f32[4,5]", "f32[4,6]"}, .outputs = {""}, .error = "inner dims differ"});
  t.push_back({.op = "Gemm", .inputs = {"f32[2,4,5]", "f32[5,6]"}, .outputs = {""}, .error = "must be 2-D"});
  t.push_back({.op = "MatMul", .inputs = {"f32[2,3,4]", "f32[4,5]"}, .outputs = {"f32[2,3,5]"}});
  t.push_back({.op = "MatMul", .inputs = {"f32[4]", "f32[4,5]"}, .outputs = {"f32[5]"}});
  t.push_back({.op = "MatMul", .inputs = {"f32[2,3,4]", "f32[4]"}, .outputs = {"f32[2,3]"}});
  t.push_back({.op = "MatMul", .inputs = {"f32[4]", "f32[4]"}, .outputs = {"f32[]"}});
  t.push_back({.op = "MatMul", .inputs = {"f32[2,1,3,4]", "f32[5,4,6]"}, .outputs = {"f32[2,5,3,6]"}});
  t.push_back({.op = "MatMul", .inputs = {"f32[-1,3,4]", "f32[-1,-1]"}, .outputs = {"f32[-1,3,-1]"}});
  t.push_back({.op = "MatMul", .inputs = {"f32[?]", "f32[4,5]"}, .outputs = {"f32[?]"}});
  t.push_back({.op = "MatMul", .inputs = {"f32[2,3]", "f32[4,5]"}, .outputs = {""}, .error = "inner dims differ"});
  t.push_back({.op = "MatMul", .inputs = {"f32[]", "f32[4,5]"}, .outputs = {""}, .error = "rank >= 1"});
  t.push_back({.op = "MatMul", .inputs = {"f32[2,3,4]", "f32[3,4,5]"}, .outputs = {""},
               .error = "batch dims"});
  t.push_back({.op = "MatMul", .inputs = {"bool[2,2]", "bool[2,2]"}, .outputs = {""}, .error = "not allowed"});
  t.push_back({.op = "Flatten", .inputs = {"f32[2,3,4,5]"}, .outputs = {"f32[2,60]"}});
  t.push_back({.op = "Flatten", .inputs = {"f32[2,3,4,5]"}, .attrs = {{"axis", 0}}, .outputs = {"f32[1,120]"}});
  t.push_back({.op = "Flatten", .inputs = {"f32[2,3,4,5]"}, .attrs = {{"axis", 4}}, .outputs = {"f32[120,1]"}});
  t.push_back({.op = "Flatten", .inputs = {"f32[2,3,4,5]"}, .attrs = {{"axis", -1}}, .outputs = {"f32[24,5]"}});
  t.push_back({.op = "Flatten", .inputs = {"f32[-1,3,4]"}, .outputs = {"f32[-1,12]"}});
  t.push_back({.op = "Flatten", .inputs = {"f32[0,-1]"}, .outputs = {"f32[0,-1]"}});
  t.push_back({.op = "Flatten", .inputs = {"f32[?]"}, .outputs = {"f32[-1,-1]"}});
  t.push_back({.op = "Flatten", .inputs = {"f32[2,3,4,5]"}, .attrs = {{"axis", 5}}, .outputs = {""},
               .error = "axis 5 is out of range for rank 4"});
}

// RNN, GRU, LSTM (rnn_ops.cc): Y [seq, dirs, batch, hidden] and the states,
// or batch-major with layout 1.
void AddRecurrentCases(std::vector<InferCase>& t) {
  const std::string bidirectional = "bidirectional";
  t.push_back({.op = "RNN", .inputs = {"f32[5,2,3]", "f32[1,4,3]", "f32[1,4,4]"}, .attrs = {{"hidden_size", 4}},
               .outputs = {"f32[5,1,2,4]", "f32[1,2,4]"}});
  t.push_back({.op = "RNN", .inputs = {"f32[2,-1,3]", "f32[1,4,3]", "f32[1,4,4]"}, .attrs = {{"layout", 1}},
               .outputs = {"f32[2,-1,1,4]", "f32[2,1,4]"}});
  t.push_back({.op = "RNN", .inputs = {"f32[5,2,3]", "f32[1,4,3]", "f32[1,4,4]"}, .attrs = {{"hidden_size", 5}},
               .outputs = {"", ""}, .error = "does not match W's dim 1"});
  t.push_back({.op = "GRU", .inputs = {"f32[-1,-1,3]", "f32[2,12,3]", "f32[2,12,4]"},
               .attrs = {{"direction", bidirectional}}, .outputs = {"f32[-1,2,-1,4]", "f32[2,-1,4]"}});
  t.push_back({.op = "GRU", .inputs = {"f32[5,2,3]", "f32[1,13,3]", "f32[1,13,4]"}, .outputs = {"", ""},
               .error = "not a multiple of 3"});
  t.push_back({.op = "GRU", .inputs = {"f32[5,2,3]", "f32[1,12,3]", "f32[1,12,4]"},
               .attrs = {{"direction", std::string("sideways")}}, .outputs = {"", ""}, .error = "direction"});
  t.push_back({.op = "LSTM", .inputs = {"f16[7,1,2]", "f16[1,16,2]", "f16[1,16,4]", "f16[1,32]", "i32[1]"},
               .outputs = {"f16[7,1,1,4]", "f16[1,1,4]", "f16[1,1,4]"}});
  t.push_back({.op = "LSTM", .inputs = {"f32[?]", "f32[?]", "f32[?]"}, .attrs = {{"hidden_size", 3}},
               .outputs = {"f32[-1,1,-1,3]", "f32[1,-1,3]", "f32[1,-1,3]"}});
  t.push_back({.op = "LSTM", .inputs = {"f32[7,1,2]", "f32[2,16,2]", "f32[2,16,4]"}, .outputs = {"", "", ""},
               .error = "W has 2 directions"});
  t.push_back({.op = "LSTM", .inputs = {"f32[7,1,3]", "f32[1,16,2]", "f32[1,16,4]"}, .outputs = {"", "", ""},
               .error = "input size 3 does not match W's 2"});
}

}  // namespace

const std::vector<InferCase>& NnCases() {
  static const auto* cases = [] {
    auto* t = new std::vector<InferCase>();
    AddConvCases(*t);
    AddConvTransposeCases(*t);
    AddDetCases(*t);
    AddUnpoolRoiEinsumCases(*t);
    AddPoolCases(*t);
    AddNormalizationCases(*t);
    AddMatrixCases(*t);
    AddRecurrentCases(*t);
    return t;
  }();
  return *cases;
}

TEST(NnOpsTest, Inference) { RunCases(NnCases()); }

TEST(NnOpsTest, ViewRules) {
  using Pairs = std::vector<std::pair<int, int>>;
  EXPECT_EQ(OpRegistry::Global().Find("Flatten")->views, (Pairs{{0, 0}}));
  EXPECT_EQ(OpRegistry::Global().Find("Dropout")->views, (Pairs{{0, 0}}));
  EXPECT_TRUE(OpRegistry::Global().Find("Conv")->views.empty());
}

}  // namespace ge::ops::testing
