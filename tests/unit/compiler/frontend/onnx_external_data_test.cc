// External-data initializers: good files, and every way a location can try
// to leave the model's directory or read past a file's end.
#include "compiler/frontend/onnx_external_data.h"

#include <cstring>
#include <filesystem>

#include "base/ir/op_types.h"
#include "compiler/frontend/onnx_importer.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/testing/onnx_builder.h"

namespace ge::frontend {
namespace {

using ::testing::AllOf;
using ::testing::HasSubstr;
using namespace ::ge::onnx_builder;  // NOLINT
namespace fs = std::filesystem;

std::string FloatBytes(const std::vector<float>& v) {
  std::string out(v.size() * sizeof(float), '\0');
  std::memcpy(out.data(), v.data(), out.size());
  return out;
}

void SetExternal(onnx::TensorProto* t, const std::string& location, int64_t offset,
                 int64_t length) {
  t->clear_raw_data();
  t->clear_float_data();
  t->set_data_location(onnx::TensorProto::EXTERNAL);
  auto add = [&](const char* key, const std::string& value) {
    auto* e = t->add_external_data();
    e->set_key(key);
    e->set_value(value);
  };
  add("location", location);
  if (offset >= 0) add("offset", std::to_string(offset));
  if (length >= 0) add("length", std::to_string(length));
}

// y = x + w, with w (f32[4]) stored externally.
onnx::ModelProto ModelWithExternalWeight(const std::string& location, int64_t offset,
                                         int64_t length) {
  onnx::ModelProto model = MakeModel(13);
  onnx::GraphProto* g = model.mutable_graph();
  AddInput(g, "x", kF32, {4});
  onnx::TensorProto* w = AddInitializer(g, "w", Tensor::FromVector<float>({0, 0, 0, 0}, Shape{4}));
  SetExternal(w, location, offset, length);
  AddNode(g, "Add", {"x", "w"}, {"y"}, "add");
  AddOutput(g, "y", kF32, {4});
  return model;
}

std::string Message(const absl::Status& s) { return std::string(s.message()); }

class ExternalDataTest : public ::testing::Test {
 protected:
  void SetUp() override {
    model_dir_ = dir_.path() / "model";
    fs::create_directories(model_dir_);
    // 8 bytes of padding, then the weights.
    Write("weights.bin", std::string(8, 'p') + FloatBytes({1.5f, 2.5f, 3.5f, 4.5f}));
  }
  std::string Write(const std::string& rel, const std::string& bytes) {
    return dir_.Write((fs::path("model") / rel).string(), bytes);
  }
  absl::StatusOr<std::unique_ptr<ir::Graph>> Import(const onnx::ModelProto& model) {
    const std::string path = Write("m.onnx", Serialize(model));
    return ImportOnnxFile(path);
  }

  TempDir dir_;
  fs::path model_dir_;
};

TEST_F(ExternalDataTest, GoodFileBecomesFileConstantAndLoads) {
  auto graph = Import(ModelWithExternalWeight("weights.bin", 8, 16));
  ASSERT_TRUE(graph.ok()) << graph.status();
  ir::Node* w = (*graph)->FindNode("w");
  ASSERT_NE(w, nullptr);
  EXPECT_EQ(w->type(), ir::kFileConstant);
  const ir::OpDesc& op = w->op_desc();
  EXPECT_EQ(op.GetAttr<std::string>(kAttrLocation), "weights.bin");
  EXPECT_EQ(op.GetAttr<int64_t>(kAttrOffset), 8);
  EXPECT_EQ(op.GetAttr<int64_t>(kAttrLength), 16);
  EXPECT_EQ(op.GetAttr<Shape>(kAttrShape), Shape{4});
  EXPECT_EQ(op.GetAttr<int64_t>(kAttrDtype), static_cast<int64_t>(DataType::kFloat));
  EXPECT_EQ(op.GetAttr<std::string>(kAttrModelDir), fs::weakly_canonical(model_dir_).string());
  EXPECT_EQ(op.output(0).type.ToString(), "f32[4]");

  auto ref = ExternalDataRefFromOpDesc(op);
  ASSERT_TRUE(ref.ok()) << ref.status();
  auto tensor = LoadExternalTensor(*ref);
  ASSERT_TRUE(tensor.ok()) << tensor.status();
  EXPECT_EQ(tensor->shape(), Shape{4});
  EXPECT_FLOAT_EQ(tensor->data<float>()[0], 1.5f);
  EXPECT_FLOAT_EQ(tensor->data<float>()[3], 4.5f);
}

TEST_F(ExternalDataTest, LengthDefaultsToTheTensorSizeAndSubdirectoriesWork) {
  Write("data/w.bin", FloatBytes({1, 2, 3, 4}));
  for (const char* location : {"data/w.bin", "data/../data/w.bin", "./data/w.bin"}) {
    auto graph = Import(ModelWithExternalWeight(location, -1, -1));
    ASSERT_TRUE(graph.ok()) << location << ": " << graph.status();
    const ir::OpDesc& op = (*graph)->FindNode("w")->op_desc();
    EXPECT_EQ(op.GetAttr<int64_t>(kAttrLength), 16);
    EXPECT_EQ(op.GetAttr<int64_t>(kAttrOffset), 0);
  }
}

TEST_F(ExternalDataTest, AbsolutePathIsRejected) {
  const std::string abs = (model_dir_ / "weights.bin").string();
  auto graph = Import(ModelWithExternalWeight(abs, 8, 16));
  ASSERT_FALSE(graph.ok());
  EXPECT_EQ(graph.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(Message(graph.status()), AllOf(HasSubstr("'w'"), HasSubstr("absolute")));
}

TEST_F(ExternalDataTest, DotDotEscapeIsRejected) {
  dir_.Write("secret.bin", FloatBytes({9, 9, 9, 9}));
  // A sibling directory sharing the model dir's name as a prefix must not
  // count as inside it.
  dir_.Write("model2/w.bin", FloatBytes({9, 9, 9, 9}));
  for (const char* location : {"../secret.bin", "data/../../secret.bin", "../model2/w.bin"}) {
    auto graph = Import(ModelWithExternalWeight(location, 0, 16));
    ASSERT_FALSE(graph.ok()) << location;
    EXPECT_THAT(Message(graph.status()),
                AllOf(HasSubstr("'w'"), HasSubstr(location), HasSubstr("outside")));
  }
}

TEST_F(ExternalDataTest, SymlinkEscapeIsRejected) {
  const std::string outside = dir_.Write("outside/w.bin", FloatBytes({9, 9, 9, 9}));
  fs::create_symlink(outside, model_dir_ / "link.bin");
  fs::create_directory_symlink(dir_.path() / "outside", model_dir_ / "linkdir");
  for (const char* location : {"link.bin", "linkdir/w.bin"}) {
    auto graph = Import(ModelWithExternalWeight(location, 0, 16));
    ASSERT_FALSE(graph.ok()) << location;
    EXPECT_THAT(Message(graph.status()), AllOf(HasSubstr(location), HasSubstr("outside")));
  }
  // A symlink that stays inside is fine.
  fs::create_symlink(model_dir_ / "weights.bin", model_dir_ / "inside.bin");
  EXPECT_TRUE(Import(ModelWithExternalWeight("inside.bin", 8, 16)).ok());
}

TEST_F(ExternalDataTest, MissingFileNamesInitializerAndPath) {
  auto graph = Import(ModelWithExternalWeight("nope.bin", 0, 16));
  ASSERT_FALSE(graph.ok());
  EXPECT_EQ(graph.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(Message(graph.status()), AllOf(HasSubstr("initializer 'w'"), HasSubstr("nope.bin"),
                                             HasSubstr("does not exist")));
}

TEST_F(ExternalDataTest, OffsetAndLengthBeyondTheFile) {
  auto past_end = Import(ModelWithExternalWeight("weights.bin", 12, 16));  // file is 24 bytes
  ASSERT_FALSE(past_end.ok());
  EXPECT_THAT(Message(past_end.status()), AllOf(HasSubstr("'w'"), HasSubstr("beyond the end")));
  auto huge_offset = Import(ModelWithExternalWeight("weights.bin", int64_t{1} << 62, 16));
  ASSERT_FALSE(huge_offset.ok());
  EXPECT_THAT(Message(huge_offset.status()), HasSubstr("beyond the end"));
  auto wrong_length = Import(ModelWithExternalWeight("weights.bin", 0, 12));
  ASSERT_FALSE(wrong_length.ok());
  EXPECT_THAT(Message(wrong_length.status()), HasSubstr("does not match"));

  onnx::ModelProto bad_offset = ModelWithExternalWeight("weights.bin", -1, 16);
  auto* e = bad_offset.mutable_graph()->mutable_initializer(0)->add_external_data();
  e->set_key("offset");
  e->set_value("12abc");
  auto not_a_number = Import(bad_offset);
  ASSERT_FALSE(not_a_number.ok());
  EXPECT_THAT(Message(not_a_number.status()), HasSubstr("12abc"));
}

TEST_F(ExternalDataTest, LoadRechecksTheFile) {
  ExternalDataRef ref;
  ref.tensor_name = "w";
  ref.model_dir = model_dir_.string();
  ref.location = "weights.bin";
  ref.offset = 8;
  ref.length = 16;
  ref.dtype = DataType::kFloat;
  ref.shape = Shape{4};
  ASSERT_TRUE(LoadExternalTensor(ref).ok());
  Write("weights.bin", "short");  // shrunk since import
  auto shrunk = LoadExternalTensor(ref);
  ASSERT_FALSE(shrunk.ok());
  EXPECT_THAT(Message(shrunk.status()), HasSubstr("beyond the end"));
  ref.dtype = DataType::kString;
  EXPECT_FALSE(LoadExternalTensor(ref).ok());
}

TEST_F(ExternalDataTest, BytesWithoutModelDirectory) {
  Write("weights.bin", FloatBytes({1, 2, 3, 4}));
  const std::string bytes = Serialize(ModelWithExternalWeight("weights.bin", 0, 16));
  auto no_dir = ImportOnnxBytes(bytes, "");
  ASSERT_FALSE(no_dir.ok());
  EXPECT_THAT(Message(no_dir.status()), HasSubstr("directory"));
  auto with_dir = ImportOnnxBytes(bytes, model_dir_.string());
  EXPECT_TRUE(with_dir.ok()) << with_dir.status();
}

TEST(ResolveExternalDataPathTest, RejectsUnsafeLocations) {
  EXPECT_FALSE(ResolveExternalDataPath("/models/a", "", "t").ok());
  EXPECT_FALSE(ResolveExternalDataPath("/models/a", std::string("w\0.bin", 6), "t").ok());
  EXPECT_FALSE(ResolveExternalDataPath("/models/a", "/etc/passwd", "t").ok());
  EXPECT_FALSE(ResolveExternalDataPath("/models/a", "../ab/w.bin", "t").ok());
  EXPECT_FALSE(ResolveExternalDataPath("/models/a", "..", "t").ok());
  auto ok = ResolveExternalDataPath("/models/a", "x/../w.bin", "t");
  ASSERT_TRUE(ok.ok()) << ok.status();
  EXPECT_EQ(ok->string(), "/models/a/w.bin");
}

}  // namespace
}  // namespace ge::frontend
