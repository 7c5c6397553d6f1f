// VarManager: the four reuse strategies, logical addresses, first-access
// allocation with init values, external memory, ready/loaded state, the
// pool's isolation and memory back at baseline, and serialization.
#include "runtime/variables/var_manager.h"

#include <cstring>

#include "gtest/gtest.h"
#include "runtime/variables/var_manager_serial.h"

namespace ge::variables {
namespace {

VarInfo Var(std::string name, Shape shape, DataType dtype = DataType::kFloat, ir::Format format = ir::Format::kND) {
  VarInfo info;
  info.name = std::move(name);
  info.desc = VarDesc{dtype, std::move(shape), format};
  return info;
}

VarInfo Constant(std::string name, std::vector<float> values) {
  VarInfo info = Var(std::move(name), Shape{static_cast<int64_t>(values.size())});
  info.kind = VarKind::kConstant;
  info.init_value = Tensor::FromVector<float>(values, info.desc.shape);
  return info;
}

VarInfo FileConst(std::string name, std::string path, int64_t offset) {
  VarInfo info = Var(std::move(name), Shape{4});
  info.kind = VarKind::kFileConstant;
  info.file = FileRef{std::move(path), offset, 16};
  return info;
}

TEST(VarKeyTest, IsNameFormatDtype) {
  EXPECT_EQ(VarKey("w", VarDesc{DataType::kFloat, Shape{2}, ir::Format::kND}), "w_ND_f32");
  EXPECT_EQ(VarKey("w", VarDesc{DataType::kFloat16, Shape{2}, ir::Format::kNHWC}), "w_NHWC_f16");
}

TEST(VarManagerTest, AddressesStartAtTheLogicBaseAndAreAligned) {
  VarManager vm(1, nullptr);
  VarInfo a = Var("a", Shape{3});
  VarInfo b = Var("b", Shape{100});
  ASSERT_EQ(*vm.AssignVarMem(a), kVarMemoryLogicBase);
  ASSERT_EQ(*vm.AssignVarMem(b), kVarMemoryLogicBase + 64);
  EXPECT_EQ(b.size, 448u);
  EXPECT_TRUE(vm.IsVarExist("a"));
  EXPECT_FALSE(vm.IsVarExist("c"));
  EXPECT_EQ(*vm.GetVarAddr("b", b.desc), kVarMemoryLogicBase + 64);
  auto missing = vm.GetVarAddr("a", VarDesc{DataType::kInt64, Shape{3}});
  EXPECT_EQ(missing.status().code(), absl::StatusCode::kNotFound);
  EXPECT_NE(missing.status().message().find("a_ND_i64"), std::string_view::npos);
}

TEST(VarManagerTest, ReuseByFormatMatch) {
  VarManager vm(1, nullptr);
  VarInfo first = Var("w", Shape{8});
  VarInfo again = Var("w", Shape{8});
  const uint64_t addr = *vm.AssignVarMem(first);
  EXPECT_EQ(*vm.AssignVarMem(again), addr);
  EXPECT_EQ(vm.ToSerial().mem_used[MemType::kDevice], 64u);
}

TEST(VarManagerTest, ReuseConstantsByContent) {
  VarManager vm(1, nullptr);
  VarInfo c1 = Constant("c1", {1, 2, 3, 4});
  VarInfo c2 = Constant("c2", {1, 2, 3, 4});
  VarInfo c3 = Constant("c3", {1, 2, 3, 5});
  const uint64_t a1 = *vm.AssignVarMem(c1);
  EXPECT_EQ(*vm.AssignVarMem(c2), a1);
  EXPECT_NE(*vm.AssignVarMem(c3), a1);
  // Variables with equal init values are state: never merged.
  VarInfo v1 = Var("v1", Shape{4});
  v1.init_value = Tensor::FromVector<float>({1, 2, 3, 4}, Shape{4});
  EXPECT_NE(*vm.AssignVarMem(v1), a1);
}

TEST(VarManagerTest, ReuseFileConstantsByPathAndOffset) {
  VarManager vm(1, nullptr);
  VarInfo f1 = FileConst("f1", "/weights.bin", 0);
  VarInfo f2 = FileConst("f2", "/weights.bin", 0);
  VarInfo f3 = FileConst("f3", "/weights.bin", 16);
  VarInfo f4 = FileConst("f4", "/other.bin", 0);
  const uint64_t a1 = *vm.AssignVarMem(f1);
  EXPECT_EQ(*vm.AssignVarMem(f2), a1);
  EXPECT_NE(*vm.AssignVarMem(f3), a1);
  EXPECT_NE(*vm.AssignVarMem(f4), a1);
}

TEST(VarManagerTest, ReuseWhenTheNewDescriptionFits) {
  VarManager vm(1, nullptr);
  VarInfo f32 = Var("w", Shape{8}, DataType::kFloat);
  VarInfo f16 = Var("w", Shape{8}, DataType::kFloat16, ir::Format::kNHWC);
  VarInfo f64 = Var("w", Shape{64}, DataType::kDouble);
  const uint64_t addr = *vm.AssignVarMem(f32);
  EXPECT_EQ(*vm.AssignVarMem(f16), addr);   // 16 bytes fit in 64
  EXPECT_NE(*vm.AssignVarMem(f64), addr);   // 512 bytes do not
  EXPECT_EQ(vm.GetCurVarDesc("w")->dtype, DataType::kDouble);
}

TEST(VarManagerTest, LimitIsResourceExhaustedNamingTheVariable) {
  VarManager vm(1, nullptr, 0, /*limit_bytes=*/128);
  VarInfo a = Var("a", Shape{16});
  VarInfo b = Var("big", Shape{32});
  ASSERT_TRUE(vm.AssignVarMem(a).ok());
  auto s = vm.AssignVarMem(b);
  EXPECT_EQ(s.status().code(), absl::StatusCode::kResourceExhausted);
  EXPECT_NE(s.status().message().find("'big'"), std::string_view::npos);
}

TEST(VarManagerTest, AllocatesOnFirstAccessWithTheInitValue) {
  device::CpuDevice dev({"cpu:0", 0, 1});
  VarManager vm(7, &dev);
  VarInfo w = Var("w", Shape{3});
  w.init_value = Tensor::FromVector<float>({1.5f, 2.5f, 3.5f}, Shape{3});
  VarInfo z = Var("z", Shape{2});
  ASSERT_TRUE(vm.AssignVarMem(w).ok());
  ASSERT_TRUE(vm.AssignVarMem(z).ok());
  EXPECT_EQ(dev.memory_stats().in_use_bytes, 0);
  EXPECT_TRUE(vm.IsInitialized("w"));
  EXPECT_FALSE(vm.IsInitialized("z"));
  auto p = vm.GetVarMemoryAddr(w.logic_addr);
  ASSERT_TRUE(p.ok());
  EXPECT_EQ(*vm.GetVarMemoryAddr(w.logic_addr), *p);  // cached
  EXPECT_EQ(static_cast<float*>(*p)[1], 2.5f);
  EXPECT_EQ(dev.memory_stats().in_use_bytes, 64);
  Tensor zt = *vm.GetVarTensor("z");
  EXPECT_EQ(zt.data<float>()[0], 0.0f);
  ASSERT_TRUE(vm.WriteVar("z", Tensor::FromVector<float>({4, 5}, Shape{2})).ok());
  EXPECT_EQ(zt.data<float>()[1], 5.0f);
  EXPECT_TRUE(vm.IsInitialized("z"));
  EXPECT_EQ(vm.WriteVar("z", Tensor::FromVector<float>({4}, Shape{1})).code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(vm.GetVarMemoryAddr(kVarMemoryLogicBase + 4096).status().code(), absl::StatusCode::kInvalidArgument);
  ASSERT_TRUE(vm.FreeVarMemory().ok());
  EXPECT_EQ(dev.memory_stats().in_use_bytes, 0);
}

TEST(VarManagerTest, ExternalMemoryIsBasePlusOffset) {
  alignas(64) static char block[256];
  VarManager vm(1, nullptr);
  VarInfo a = Var("a", Shape{4});
  VarInfo b = Var("b", Shape{4});
  b.init_value = Tensor::FromVector<float>({9, 9, 9, 9}, Shape{4});
  ASSERT_TRUE(vm.AssignVarMem(a).ok());
  ASSERT_TRUE(vm.AssignVarMem(b).ok());
  ASSERT_TRUE(vm.SetExternalVarMemory(block, sizeof(block)).ok());
  EXPECT_EQ(*vm.GetVarMemoryAddr(b.logic_addr), block + 64);
  float nine;
  std::memcpy(&nine, block + 64, 4);
  EXPECT_EQ(nine, 9.0f);
  VarInfo c = Var("c", Shape{64});
  ASSERT_TRUE(vm.AssignVarMem(c).ok());
  EXPECT_EQ(vm.GetVarMemoryAddr(c.logic_addr).status().code(), absl::StatusCode::kResourceExhausted);
}

TEST(VarManagerTest, ReadyStateIsPerDeviceAndLoadsAreDeduplicated) {
  VarManager vm(1, nullptr);
  VarInfo c1 = Constant("c1", {1, 2});
  VarInfo c2 = Constant("c2", {1, 2});
  ASSERT_TRUE(vm.AssignVarMem(c1).ok());
  ASSERT_TRUE(vm.AssignVarMem(c2).ok());
  const std::string key = VarKey("c1", c1.desc);
  vm.SetVarIsReady(key, 0);
  EXPECT_TRUE(vm.IsVarReady(key, 0));
  EXPECT_FALSE(vm.IsVarReady(key, 1));
  EXPECT_FALSE(*vm.CheckAndSetVarLoaded("c1", c1.desc, 0));
  EXPECT_TRUE(*vm.CheckAndSetVarLoaded("c2", c2.desc, 0));  // same memory, already loaded
  EXPECT_FALSE(*vm.CheckAndSetVarLoaded("c2", c2.desc, 1));
  EXPECT_EQ(vm.CheckAndSetVarLoaded("nope", c1.desc, 0).status().code(), absl::StatusCode::kNotFound);
}

TEST(VarManagerTest, BatchNamesShareOneVariable) {
  VarManager vm(1, nullptr);
  VarInfo w = Var("w", Shape{2});
  ASSERT_TRUE(vm.AssignVarMem(w).ok());
  vm.SetBatchVariablesKeyName("w_batch_1", "w");
  EXPECT_EQ(vm.ResolveName("w_batch_1"), "w");
  EXPECT_EQ(vm.ResolveName("x"), "x");
}

TEST(VarManagerPoolTest, SessionsAreIsolatedAndDestroyReturnsMemory) {
  device::CpuDevice dev({"cpu:0", 0, 1});
  VarManagerPool pool;
  const int64_t baseline = dev.memory_stats().in_use_bytes;
  auto s1 = pool.GetOrCreate(1, &dev);
  auto s2 = pool.GetOrCreate(2, &dev);
  EXPECT_EQ(pool.GetOrCreate(1, &dev), s1);
  VarInfo w = Var("w", Shape{16});
  w.init_value = Tensor::FromVector<float>(std::vector<float>(16, 1.0f), Shape{16});
  ASSERT_TRUE(s1->AssignVarMem(w).ok());
  ASSERT_TRUE(s1->GetVarTensor("w").ok());
  EXPECT_FALSE(s2->IsVarExist("w"));
  EXPECT_EQ(s2->GetVarTensor("w").status().code(), absl::StatusCode::kNotFound);
  EXPECT_GT(dev.memory_stats().in_use_bytes, baseline);
  ASSERT_TRUE(pool.Destroy(1).ok());
  EXPECT_EQ(dev.memory_stats().in_use_bytes, baseline);
  EXPECT_EQ(pool.Get(1), nullptr);
  EXPECT_EQ(pool.Destroy(1).code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(pool.size(), 1u);
}

TEST(VarManagerSerialTest, RoundTripKeepsEveryTable) {
  VarManager vm(42, nullptr);
  VarInfo w = Var("w", Shape{2, 2});
  w.init_value = Tensor::FromVector<float>({1, 2, 3, 4}, Shape{2, 2});
  VarInfo f = FileConst("f", "/w.bin", 32);
  ASSERT_TRUE(vm.AssignVarMem(w).ok());
  ASSERT_TRUE(vm.AssignVarMem(f).ok());
  ASSERT_TRUE(vm.SetTransRoad("w", {TransNode{"Cast", w.desc, VarDesc{DataType::kFloat16, Shape{2, 2}}}}).ok());
  vm.SetBatchVariablesKeyName("w_b1", "w");
  v1::VarManagerInfo proto;
  ASSERT_TRUE(VarManagerInfoToProto(vm.ToSerial(), &proto).ok());
  v1::VarManagerInfo parsed;
  ASSERT_TRUE(parsed.ParseFromString(proto.SerializeAsString()));
  auto info = VarManagerInfoFromProto(parsed);
  ASSERT_TRUE(info.ok()) << info.status();
  auto restored = VarManager::FromSerial(*info, nullptr);
  ASSERT_TRUE(restored.ok()) << restored.status();
  VarManager& r = **restored;
  EXPECT_EQ(r.session_id(), 42u);
  EXPECT_EQ(*r.GetVarAddr("w", w.desc), w.logic_addr);
  EXPECT_EQ(*r.GetVarAddr("f", f.desc), f.logic_addr);
  EXPECT_EQ(r.GetTransRoad("w").size(), 1u);
  EXPECT_EQ(r.GetTransRoad("w")[0].output.dtype, DataType::kFloat16);
  EXPECT_EQ(r.ResolveName("w_b1"), "w");
  EXPECT_TRUE(r.IsInitialized("w"));
  // A new variable continues after the restored ones.
  VarInfo n = Var("n", Shape{1});
  EXPECT_EQ(*r.AssignVarMem(n), f.logic_addr + f.size);
  // A file cannot smuggle in an address below the base.
  parsed.mutable_vars(0)->set_logic_addr(5);
  EXPECT_EQ(VarManagerInfoFromProto(parsed).status().code(), absl::StatusCode::kInvalidArgument);
}

TEST(VarManagerTest, RestoreMapsAModelsVariablesIntoTheSession) {
  device::CpuDevice dev({"cpu:0", 0, 1});
  VarManager compile_time(0, nullptr);
  VarInfo w = Var("w", Shape{4});
  w.init_value = Tensor::FromVector<float>({1, 2, 3, 4}, Shape{4});
  ASSERT_TRUE(compile_time.AssignVarMem(w).ok());
  VarManager session(5, &dev);
  VarInfo other = Var("other", Shape{32});
  ASSERT_TRUE(session.AssignVarMem(other).ok());
  ASSERT_TRUE(session.Restore(compile_time.ToSerial()).ok());
  const uint64_t addr = *session.GetVarAddr("w", w.desc);
  EXPECT_NE(addr, w.logic_addr);  // the session's own address
  EXPECT_EQ(session.GetVarTensor("w")->data<float>()[3], 4.0f);
  // Restoring again (a second model) keeps the value the session holds.
  ASSERT_TRUE(session.WriteVar("w", Tensor::FromVector<float>({0, 0, 0, 7}, Shape{4})).ok());
  ASSERT_TRUE(session.Restore(compile_time.ToSerial()).ok());
  EXPECT_EQ(session.GetVarTensor("w")->data<float>()[3], 7.0f);
}

// Two models of one session declaring one variable differently: the key
// (name, format, dtype) holds no shape, so the second would view the first's
// memory as larger than it is. Refused, naming both declarations.
TEST(VarManagerTest, ARedeclarationWithAnotherShapeOrDtypeIsRefused) {
  VarManager vm(1, nullptr);
  ASSERT_TRUE(vm.RestoreVarMem(Var("w", Shape{2})).ok());
  ASSERT_TRUE(vm.RestoreVarMem(Var("w", Shape{2})).ok());  // the same declaration again
  auto larger = vm.RestoreVarMem(Var("w", Shape{1000}));
  EXPECT_EQ(larger.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(larger.status().message().find("declared as f32[1000]"), absl::string_view::npos) << larger.status();
  EXPECT_NE(larger.status().message().find("already declared it as f32[2]"), absl::string_view::npos);
  auto other_dtype = vm.RestoreVarMem(Var("w", Shape{2}, DataType::kInt64));
  EXPECT_EQ(other_dtype.status().code(), absl::StatusCode::kInvalidArgument) << other_dtype.status();
  // A conversion path is compared by its declared (first) form.
  VarInfo converted = Var("w", Shape{1, 2}, DataType::kFloat, ir::Format::kNHWC);
  converted.trans_road.push_back({"Reshape", VarDesc{DataType::kFloat, Shape{2}}, converted.desc});
  EXPECT_TRUE(vm.RestoreVarMem(converted).ok());
  // Constants are not declarations: their names may repeat across models.
  EXPECT_TRUE(vm.RestoreVarMem(Constant("c", {1, 2})).ok());
  EXPECT_TRUE(vm.RestoreVarMem(Constant("c", {1, 2, 3})).ok());
  // An address lookup never lays a larger description over the memory.
  auto addr = vm.GetVarAddr("w", VarDesc{DataType::kFloat, Shape{1000}});
  EXPECT_EQ(addr.status().code(), absl::StatusCode::kInvalidArgument) << addr.status();
}

}  // namespace
}  // namespace ge::variables
