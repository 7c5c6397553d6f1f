// VarResource: keys, current descriptions, aliases sharing one address and
// their initialized state, lookup by address, batch names, device state.
#include "runtime/variables/var_resource.h"

#include "gtest/gtest.h"

namespace ge::variables {
namespace {

VarInfo At(std::string name, uint64_t offset, DataType dtype = DataType::kFloat) {
  VarInfo info;
  info.name = std::move(name);
  info.desc = VarDesc{dtype, Shape{4}, ir::Format::kND};
  info.logic_addr = kVarMemoryLogicBase + offset;
  info.size = 64;
  return info;
}

TEST(VarResourceTest, AliasesShareTheirMemorysState) {
  VarResource r;
  r.Add(At("w", 0), /*initialized=*/false, /*make_current=*/true);
  r.Add(At("w", 0, DataType::kInt32), /*initialized=*/false, /*make_current=*/false);
  EXPECT_EQ(r.FindByName("w")->info.desc.dtype, DataType::kFloat);  // the first stays current
  EXPECT_NE(r.FindByKey("w_ND_i32"), nullptr);
  r.SetInitialized(kVarMemoryLogicBase, true);
  EXPECT_TRUE(r.FindByKey("w_ND_i32")->initialized);
  EXPECT_TRUE(r.FindByKey("w_ND_f32")->initialized);
  r.SetCurrentKey("w", "w_ND_i32");
  EXPECT_EQ(r.FindByName("w")->info.desc.dtype, DataType::kInt32);
  r.ResetInitialized();
  EXPECT_FALSE(r.FindByName("w")->initialized);
}

TEST(VarResourceTest, FindsByAddressInsideAVariable) {
  VarResource r;
  r.Add(At("a", 0), false, true);
  r.Add(At("b", 64), false, true);
  EXPECT_EQ(r.FindByAddress(kVarMemoryLogicBase + 70)->info.name, "b");
  EXPECT_EQ(r.FindByAddress(kVarMemoryLogicBase + 63)->info.name, "a");
  EXPECT_EQ(r.FindByAddress(kVarMemoryLogicBase + 128), nullptr);
  EXPECT_EQ(r.VariableNames(), (std::vector<std::string>{"a", "b"}));
}

TEST(VarResourceTest, BatchNamesAndDeviceState) {
  VarResource r;
  r.SetBatchName("w_gear_2", "w");
  EXPECT_EQ(r.ResolveName("w_gear_2"), "w");
  EXPECT_EQ(r.ResolveName("w"), "w");
  r.SetReady("w_ND_f32", 0);
  EXPECT_TRUE(r.IsReady("w_ND_f32", 0));
  EXPECT_FALSE(r.IsReady("w_ND_f32", 1));
  EXPECT_TRUE(r.MarkLoaded(kVarMemoryLogicBase, 0));
  EXPECT_FALSE(r.MarkLoaded(kVarMemoryLogicBase, 0));
  r.ClearDeviceState();
  EXPECT_FALSE(r.IsReady("w_ND_f32", 0));
  EXPECT_TRUE(r.MarkLoaded(kVarMemoryLogicBase, 0));
}

}  // namespace
}  // namespace ge::variables
