// The table runner for shape inference tests.
#include "tests/unit/base/ops/op_test_util.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace ge::ops::testing {
namespace {

std::string Describe(const InferCase& c) {
  std::string out = c.op + "(";
  for (size_t i = 0; i < c.inputs.size(); ++i) out += (i ? ", " : "") + (c.inputs[i].empty() ? "-" : c.inputs[i]);
  out += ")";
  for (const auto& [name, value] : c.attrs) out += StrCat(" ", name, ":", ir::AttrKindName(value.kind()));
  for (const auto& [i, value] : c.values) out += StrCat(" value", i, "=", value.DebugString());
  return out;
}

bool AllKnown(const InferCase& c, const std::vector<ir::ValueType>& types, const OpSchema& schema) {
  for (size_t i = 0; i < types.size(); ++i) {
    if (c.inputs[i].empty()) continue;
    if (!types[i].shape().IsFullyKnown()) return false;
  }
  for (int i : schema.value_inputs) {
    if (i < static_cast<int>(c.inputs.size()) && !c.inputs[i].empty() && !c.values.contains(i)) return false;
  }
  return !schema.value_dependent_output_shape;
}

}  // namespace

void RunCase(const InferCase& c) {
  SCOPED_TRACE(Describe(c));
  const OpSchema* schema = OpRegistry::Global().Find(c.op);
  ASSERT_NE(schema, nullptr) << "unknown op " << c.op;
  ir::OpDesc op("n", c.op);
  std::vector<ir::ValueType> types(c.inputs.size());
  for (size_t i = 0; i < c.inputs.size(); ++i) {
    if (c.inputs[i].empty()) {
      op.AddInput({});
      continue;
    }
    auto parsed = ir::ValueType::Parse(c.inputs[i]);
    ASSERT_TRUE(parsed.ok()) << parsed.status();
    types[i] = *parsed;
    op.AddInput({"", types[i]});
  }
  for (size_t i = 0; i < c.outputs.size(); ++i) {
    ir::IoDesc out;
    if (i < c.declared.size() && !c.declared[i].empty()) {
      auto parsed = ir::ValueType::Parse(c.declared[i]);
      ASSERT_TRUE(parsed.ok()) << parsed.status();
      out.type = *parsed;
    }
    op.AddOutput(std::move(out));
  }
  for (const auto& [name, value] : c.attrs) op.SetAttr(name, value);
  std::vector<const ir::ValueType*> type_ptrs;
  std::vector<const Tensor*> value_ptrs;
  for (size_t i = 0; i < c.inputs.size(); ++i) {
    type_ptrs.push_back(c.inputs[i].empty() ? nullptr : &types[i]);
    auto it = c.values.find(static_cast<int>(i));
    value_ptrs.push_back(it == c.values.end() ? nullptr : &it->second);
  }
  auto result = InferOutputTypes(op, type_ptrs, value_ptrs);
  if (!c.error.empty()) {
    ASSERT_FALSE(result.ok()) << "expected an error containing '" << c.error << "'";
    const std::string message(result.status().message());
    EXPECT_THAT(message, ::testing::HasSubstr(c.error));
    EXPECT_THAT(message, ::testing::StartsWith("node 'n' (" + c.op + ")"));
    return;
  }
  ASSERT_TRUE(result.ok()) << result.status();
  ASSERT_EQ(result->size(), c.outputs.size());
  for (size_t i = 0; i < c.outputs.size(); ++i) {
    EXPECT_EQ((*result)[i].ToString(), c.outputs[i]) << "output " << i;
  }
  // Declared outputs are kept as given, so exactness is about computed ones.
  if (c.declared.empty() && AllKnown(c, types, *schema)) {
    for (size_t i = 0; i < result->size(); ++i) {
      EXPECT_TRUE((*result)[i].shape().IsFullyKnown())
          << "output " << i << " is " << (*result)[i].ToString() << " although every input is known";
    }
  }
}

void RunCases(const std::vector<InferCase>& cases) {
  for (const InferCase& c : cases) RunCase(c);
}

Tensor I64s(std::vector<int64_t> values) {
  const int64_t n = static_cast<int64_t>(values.size());
  return Tensor::FromVector<int64_t>(values, Shape{n});
}

Tensor I32s(std::vector<int32_t> values) {
  const int64_t n = static_cast<int64_t>(values.size());
  return Tensor::FromVector<int32_t>(values, Shape{n});
}

Tensor F32s(std::vector<float> values) {
  const int64_t n = static_cast<int64_t>(values.size());
  return Tensor::FromVector<float>(values, Shape{n});
}

}  // namespace ge::ops::testing
