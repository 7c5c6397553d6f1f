// GearTable (base/ops/gear_index.h): branch selection by exact shape, the
// error listing the gears, the hybrid fallback, and the attribute form.
#include "base/ops/gear_index.h"

#include "base/ops/op_registry.h"
#include "gtest/gtest.h"

namespace ge::ops {
namespace {

GearTable TwoInputs() {
  GearTable t;
  t.num_inputs = 2;
  t.gears = {{Shape({1, 32}), Shape({1, 32})}, {Shape({1, 64}), Shape({1, 64})}};
  t.labels = {"32,32", "64,64"};
  t.option = "--dynamic_dims (ge.dynamicDims)";
  return t;
}

TEST(GearIndexTest, SelectsTheGearWithEqualShapes) {
  GearTable t = TwoInputs();
  EXPECT_EQ(*t.Select({Shape({1, 32}), Shape({1, 32})}), 0);
  EXPECT_EQ(*t.Select({Shape({1, 64}), Shape({1, 64})}), 1);
}

TEST(GearIndexTest, NoPaddingToALargerGear) {
  GearTable t = TwoInputs();
  auto r = t.Select({Shape({1, 48}), Shape({1, 48})});
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(std::string(r.status().message()),
            "input shapes [1,48], [1,48] fit no gear of this model; the gears of --dynamic_dims (ge.dynamicDims) "
            "are: 32,32; 64,64. Compile with ge.compileHybridMode=1 to run other shapes on the dynamic graph");
  // Each input must match the same gear.
  EXPECT_FALSE(t.Select({Shape({1, 32}), Shape({1, 64})}).ok());
}

TEST(GearIndexTest, HybridFallsBackToTheDynamicBranch) {
  GearTable t = TwoInputs();
  t.fallback_branch = 2;
  EXPECT_EQ(*t.Select({Shape({1, 48}), Shape({1, 48})}), 2);
  EXPECT_EQ(*t.Select({Shape({1, 64}), Shape({1, 64})}), 1);
}

TEST(GearIndexTest, AttributesRoundTrip) {
  GearTable t = TwoInputs();
  t.fallback_branch = 2;
  ir::OpDesc op("gi", std::string(kGearIndex));
  op.AddInput({"", ir::ValueType::Tensor(DataType::kFloat, Shape({1, 64}))});
  op.AddInput({"", ir::ValueType::Tensor(DataType::kFloat, Shape({1, 64}))});
  t.ToOpDesc(op);
  auto back = GearTable::FromOpDesc(op);
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(back->gears, t.gears);
  EXPECT_EQ(back->labels, t.labels);
  EXPECT_EQ(back->fallback_branch, 2);
  EXPECT_EQ(back->GearList(), "32,32; 64,64");
  // A gear table that does not fit the node's inputs is refused.
  op.AddInput({"", ir::ValueType::Tensor(DataType::kFloat, Shape({1}))});
  EXPECT_FALSE(GearTable::FromOpDesc(op).ok());
  EXPECT_FALSE(GearTable::FromOpDesc(ir::OpDesc("bare", std::string(kGearIndex))).ok());
}

TEST(GearIndexTest, SchemaGivesAnI32Scalar) {
  const OpSchema* schema = OpRegistry::Global().Find(kGearIndex);
  ASSERT_NE(schema, nullptr);
  ir::OpDesc op("gi", std::string(kGearIndex));
  op.AddInput({"", ir::ValueType::Tensor(DataType::kFloat, Shape({1, 64}))});
  op.AddOutput({"", ir::ValueType()});
  ir::ValueType in = ir::ValueType::Tensor(DataType::kFloat, Shape({1, 64}));
  auto types = InferOutputTypes(op, {&in}, {nullptr}, nullptr);
  ASSERT_TRUE(types.ok()) << types.status();
  EXPECT_EQ((*types)[0].ToString(), "i32[]");
}

}  // namespace
}  // namespace ge::ops
