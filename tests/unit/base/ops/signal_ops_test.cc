// Shape inference of DFT, STFT and MelWeightMatrix: value inputs known and
// unknown, the size bounds, and what they refuse.
#include "gtest/gtest.h"
#include "tests/unit/base/ops/op_test_util.h"

namespace ge::ops::testing {
namespace {

Tensor I64Scalar(int64_t v) { return Tensor::Scalar<int64_t>(v); }

}  // namespace

const std::vector<InferCase>& SignalOpCases() {
  static const auto* cases = [] {
    auto* t = new std::vector<InferCase>();
    t->push_back({.op = "DFT", .inputs = {"f32[1,10,10,1]"}, .outputs = {"f32[1,10,10,2]"}});
    t->push_back({.op = "DFT",
                  .inputs = {"f32[1,10,10,2]"},
                  .attrs = {{"axis", 2}, {"inverse", 1}},
                  .outputs = {"f32[1,10,10,2]"}});
    t->push_back({.op = "DFT",
                  .inputs = {"f32[2,10,1]", "i64[]"},
                  .attrs = {{"onesided", 1}},
                  .values = {{1, I64Scalar(16)}},
                  .outputs = {"f32[2,9,2]"}});
    t->push_back({.op = "DFT", .inputs = {"f64[-1,10,1]", "i64[]"}, .outputs = {"f64[-1,-1,2]"}});
    t->push_back({.op = "DFT", .inputs = {"f32[1,10,3]"}, .outputs = {""}, .error = "1 (real) or 2 (complex)"});
    t->push_back({.op = "DFT",
                  .inputs = {"f32[1,10,1]"},
                  .attrs = {{"axis", 2}},
                  .outputs = {""},
                  .error = "must name a signal dim"});
    t->push_back({.op = "DFT",
                  .inputs = {"f32[1,10,2]"},
                  .attrs = {{"onesided", 1}},
                  .outputs = {""},
                  .error = "onesided needs a real input"});
    // Hostile: a dft_length of 10^12.
    t->push_back({.op = "DFT",
                  .inputs = {"f32[1,10,1]", "i64[]"},
                  .values = {{1, I64Scalar(1000000000000)}},
                  .outputs = {""},
                  .error = "more than 2^36 elements"});
    t->push_back({.op = "STFT",
                  .inputs = {"f32[1,128,1]", "i64[]", "", "i64[]"},
                  .values = {{1, I64Scalar(8)}, {3, I64Scalar(16)}},
                  .outputs = {"f32[1,15,9,2]"}});
    t->push_back({.op = "STFT",
                  .inputs = {"f32[1,128,1]", "i64[]", "f32[16]"},
                  .attrs = {{"onesided", 0}},
                  .values = {{1, I64Scalar(8)}},
                  .outputs = {"f32[1,15,16,2]"}});
    t->push_back({.op = "STFT", .inputs = {"f32[-1,-1,1]", "i64[]", "f32[16]"}, .outputs = {"f32[-1,-1,9,2]"}});
    t->push_back({.op = "STFT",
                  .inputs = {"f32[1,128,1]", "i64[]"},
                  .values = {{1, I64Scalar(8)}},
                  .outputs = {""},
                  .error = "either window or frame_length"});
    t->push_back({.op = "STFT",
                  .inputs = {"f32[1,128,1]", "i64[]", "f32[16]", "i64[]"},
                  .values = {{1, I64Scalar(8)}, {3, I64Scalar(32)}},
                  .outputs = {""},
                  .error = "differs from the window"});
    t->push_back({.op = "MelWeightMatrix",
                  .inputs = {"i32[]", "i32[]", "i32[]", "f32[]", "f32[]"},
                  .values = {{0, I64Scalar(8)}, {1, I64Scalar(16)}},
                  .outputs = {"f32[9,8]"}});
    t->push_back({.op = "MelWeightMatrix",
                  .inputs = {"i64[]", "i64[]", "i64[]", "f32[]", "f32[]"},
                  .attrs = {{"output_datatype", 11}},
                  .outputs = {"f64[-1,-1]"}});
    t->push_back({.op = "MelWeightMatrix",
                  .inputs = {"i64[?]", "i64[-1]", "i64[]", "f32[]", "f32[]"},
                  .outputs = {"f32[-1,-1]"}});
    t->push_back({.op = "MelWeightMatrix",
                  .inputs = {"i64[]", "i64[]", "i64[]", "f32[]", "f32[]"},
                  .attrs = {{"output_datatype", 8}},
                  .outputs = {""},
                  .error = "not a numeric type"});
    // Hostile: 2^20 mel bins of a 2^40-point DFT.
    t->push_back({.op = "MelWeightMatrix",
                  .inputs = {"i64[]", "i64[]", "i64[]", "f32[]", "f32[]"},
                  .values = {{0, I64Scalar(int64_t{1} << 20)}, {1, I64Scalar(int64_t{1} << 40)}},
                  .outputs = {""},
                  .error = "more than 2^36 elements"});
    return t;
  }();
  return *cases;
}

TEST(SignalOpsTest, Inference) { RunCases(SignalOpCases()); }

}  // namespace ge::ops::testing
