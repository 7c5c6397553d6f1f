// FileConstant resolution by file_path, file_id + ge.exec.value_bins and
// location (confined to the model directory), and the shared weight cache.
#include "runtime/variables/file_constant.h"

#include <filesystem>
#include <fstream>

#include "base/io/external_data.h"
#include "gtest/gtest.h"
#include "runtime/variables/session_variables.h"

namespace ge::variables {
namespace {
namespace fs = std::filesystem;

class FileConstantTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("ged_fc_" + std::to_string(::getpid()));
    fs::create_directories(dir_);
    std::ofstream out(dir_ / "w.bin", std::ios::binary);
    const float values[8] = {1, 2, 3, 4, 5, 6, 7, 8};
    out.write(reinterpret_cast<const char*>(values), sizeof(values));
  }
  void TearDown() override { fs::remove_all(dir_); }

  ir::OpDesc Op(const std::string& name, int64_t offset) const {
    ir::OpDesc op(name, "FileConstant");
    op.SetAttr("shape", Shape{4});
    op.SetAttr("dtype", int64_t{1});
    op.SetAttr("offset", offset);
    op.AddOutput({"y", ir::ValueType(ir::TensorDesc(DataType::kFloat, Shape{4}))});
    return op;
  }
  fs::path dir_;
};

TEST_F(FileConstantTest, ResolvesByPathIdAndLocation) {
  ir::OpDesc by_path = Op("a", 16);
  by_path.SetAttr("file_path", (dir_ / "w.bin").string());
  auto a = ResolveFileConstant(by_path, {});
  ASSERT_TRUE(a.ok()) << a.status();
  EXPECT_EQ(a->offset, 16);
  EXPECT_EQ(a->length, 16);

  auto bins = ParseValueBins(R"({"value_bins": [{"value_bin_id": "v1", "value_bin_file": ")" +
                             (dir_ / "w.bin").string() + R"("}]})");
  ASSERT_TRUE(bins.ok()) << bins.status();
  ir::OpDesc by_id = Op("b", 0);
  by_id.SetAttr("file_id", "v1");
  EXPECT_EQ(ResolveFileConstant(by_id, *bins)->path, a->path);
  by_id.SetAttr("file_id", "v2");
  auto unknown = ResolveFileConstant(by_id, *bins);
  EXPECT_EQ(unknown.status().code(), absl::StatusCode::kNotFound);
  EXPECT_NE(unknown.status().message().find("'v2'"), std::string_view::npos);
  EXPECT_FALSE(ParseValueBins("{not json").ok());

  ir::OpDesc by_location = Op("c", 0);
  by_location.SetAttr("location", "w.bin");
  by_location.SetAttr(io::kAttrModelDir, dir_.string());
  EXPECT_EQ(ResolveFileConstant(by_location, {})->path, a->path);
  by_location.SetAttr("location", "../etc/passwd");
  EXPECT_EQ(ResolveFileConstant(by_location, {}).status().code(), absl::StatusCode::kInvalidArgument);

  ir::OpDesc past_end = Op("d", 24);
  past_end.SetAttr("file_path", (dir_ / "w.bin").string());
  auto s = ResolveFileConstant(past_end, {});
  EXPECT_NE(s.status().message().find("beyond the end"), std::string_view::npos) << s.status();
  EXPECT_FALSE(ResolveFileConstant(Op("e", 0), {}).ok());  // names no file
}

TEST_F(FileConstantTest, OneLoadIsSharedByOpsAndSessions) {
  FileConstantCache cache;
  ir::OpDesc op1 = Op("w1", 16);
  op1.SetAttr("file_path", (dir_ / "w.bin").string());
  ir::OpDesc op2 = Op("w2", 16);
  op2.SetAttr("location", "w.bin");
  op2.SetAttr(io::kAttrModelDir, dir_.string());
  {
    SessionVariables s1(std::make_shared<VarManager>(1, nullptr), &cache, {});
    SessionVariables s2(std::make_shared<VarManager>(2, nullptr), &cache, {});
    Tensor t1 = *s1.GetFileConstant(op1);
    Tensor t2 = *s2.GetFileConstant(op2);
    EXPECT_EQ(t1.raw_data(), t2.raw_data());
    EXPECT_EQ(t1.data<float>()[0], 5.0f);
    EXPECT_EQ(cache.loads(), 1);
    EXPECT_EQ(cache.live(), 1u);
  }
  EXPECT_EQ(cache.live(), 0u);  // the sessions held the last references
  FileConstantSource other = *ResolveFileConstant(op1, {});
  other.offset = 0;
  EXPECT_EQ(cache.Get(other, "w0")->data<float>()[0], 1.0f);
  EXPECT_EQ(cache.loads(), 2);
}

TEST(SessionVariablesTest, VariablesAreRegisteredOnFirstAccessWithTheirInitValue) {
  device::CpuDevice dev({"cpu:0", 0, 1});
  auto vm = std::make_shared<VarManager>(1, &dev);
  SessionVariables store(vm, &FileConstantCache::Global(), {});
  ir::OpDesc op("w", "Variable");
  op.SetAttr("shape", Shape{2});
  op.SetAttr("dtype", int64_t{1});
  op.SetAttr("value", Tensor::FromVector<float>({3, 4}, Shape{2}));
  op.AddOutput({"y", ir::ValueType(ir::TensorDesc(DataType::kFloat, Shape{2}))});
  Tensor t = *store.GetVariable(op);
  EXPECT_EQ(t.data<float>()[1], 4.0f);
  t.data<float>()[1] = 9.0f;  // a write through the tensor persists
  EXPECT_EQ(store.GetVariable(op)->data<float>()[1], 9.0f);
  EXPECT_TRUE(store.IsInitialized("w"));
  // A VarRef reads the variable it names.
  ir::OpDesc ref = op;
  ref.set_name("w_ref");
  ref.SetAttr(engine::kAttrRefVarSrcVarName, "w");
  EXPECT_EQ(store.GetVariable(ref)->raw_data(), t.raw_data());
  op.SetAttr("value", Tensor::FromVector<float>({3}, Shape{1}));
  op.set_name("bad");
  EXPECT_NE(store.GetVariable(op).status().message().find("init value"), std::string_view::npos);
}

}  // namespace
}  // namespace ge::variables
