// Table-driven shape inference tests: one InferCase per op configuration,
// run through InferOutputTypes (the same entry the executors use). Each
// family's test file exposes its table so that the coverage test can check
// that every registered op has at least one case.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "base/ir/attr_value.h"
#include "base/ops/op_registry.h"
#include "base/tensor.h"

namespace ge::ops::testing {

struct InferCase {
  std::string op;
  // Input types in the text form ("f32[2,-1]", "f32[?]"); "" is an absent
  // optional input.
  std::vector<std::string> inputs;
  ir::AttrMap attrs = {};
  // Known input values by input index.
  std::map<int, Tensor> values = {};
  // Declared output types before inference ("" or missing: undefined), for
  // ops that keep a declared type.
  std::vector<std::string> declared = {};
  // Expected output types; for an error case, only their count matters.
  std::vector<std::string> outputs = {};
  // Non-empty: the inference must fail with a message containing this.
  std::string error = {};
};

// Runs one case, with gtest expectations. Also checks the exactness
// contract: fully known inputs (and known value inputs) give fully known
// outputs.
void RunCase(const InferCase& c);
void RunCases(const std::vector<InferCase>& cases);

// Values for value inputs.
Tensor I64s(std::vector<int64_t> values);
Tensor I32s(std::vector<int32_t> values);
Tensor F32s(std::vector<float> values);

// The tables of each family (defined in the family's test file).
const std::vector<InferCase>& GeOpCases();
const std::vector<InferCase>& ElementwiseCases();
const std::vector<InferCase>& NnCases();
const std::vector<InferCase>& TensorCases();
const std::vector<InferCase>& ReductionCases();
const std::vector<InferCase>& LoopOpCases();      // control_flow_ops_test.cc
const std::vector<InferCase>& SequenceOpCases();  // sequence_ops_test.cc
const std::vector<InferCase>& TextOpCases();      // text_ops_test.cc
const std::vector<InferCase>& NormRandomQuantCases();  // norm_random_quant_ops_test.cc
const std::vector<InferCase>& SignalOpCases();         // signal_ops_test.cc

}  // namespace ge::ops::testing
