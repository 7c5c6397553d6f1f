// The example custom-op plugin (examples/custom_op_plugin) through gectl: a
// model using com.example::Swish imports, places Swish on the plugin's
// engine, and runs to the right values only when the plugin directory is
// named; without it the import fails naming the op and its domain.
#include <cmath>
#include <filesystem>
#include <fstream>

#include "base/io/npy.h"
#include "base/tensor.h"
#include "gtest/gtest.h"
#include "onnx/onnx_pb.h"
#include "tests/integration/process.h"

namespace ge {
namespace {

namespace fs = std::filesystem;

void SetType(onnx::ValueInfoProto* v, const std::string& name) {
  v->set_name(name);
  auto* t = v->mutable_type()->mutable_tensor_type();
  t->set_elem_type(onnx::TensorProto::FLOAT);
  t->mutable_shape()->add_dim()->set_dim_value(2);
  t->mutable_shape()->add_dim()->set_dim_value(3);
}

// Y = Swish(X, beta=2) + X: one user op between built-in ones.
onnx::ModelProto SwishModel() {
  onnx::ModelProto model;
  model.set_ir_version(8);
  model.add_opset_import()->set_version(17);
  auto* custom = model.add_opset_import();
  custom->set_domain("com.example");
  custom->set_version(1);
  onnx::GraphProto* g = model.mutable_graph();
  g->set_name("swish");
  SetType(g->add_input(), "X");
  SetType(g->add_output(), "Y");
  onnx::NodeProto* swish = g->add_node();
  swish->set_name("swish");
  swish->set_op_type("Swish");
  swish->set_domain("com.example");
  swish->add_input("X");
  swish->add_output("S");
  onnx::AttributeProto* beta = swish->add_attribute();
  beta->set_name("beta");
  beta->set_type(onnx::AttributeProto::FLOAT);
  beta->set_f(2.0f);
  onnx::NodeProto* add = g->add_node();
  add->set_name("residual");
  add->set_op_type("Add");
  add->add_input("S");
  add->add_input("X");
  add->add_output("Y");
  return model;
}

class CustomPluginTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = testing::MakeTempDir("custom-plugin");
    std::ofstream(Path("swish.onnx"), std::ios::binary) << SwishModel().SerializeAsString();
  }
  void TearDown() override { fs::remove_all(dir_); }

  std::string Path(const std::string& name) const { return (fs::path(dir_) / name).string(); }
  static std::string PluginDir() { return testing::BinaryDir() + "/examples/plugins"; }
  static testing::ProcessResult Gectl(std::vector<std::string> args) {
    args.insert(args.begin(), testing::BinaryDir() + "/bin/gectl");
    return testing::RunProcess(args, 120);
  }

  std::string dir_;
};

TEST_F(CustomPluginTest, RunsTheUserOpFromThePluginDirectory) {
  const std::vector<float> x = {-3.0f, -1.0f, -0.25f, 0.0f, 0.5f, 4.0f};
  ASSERT_TRUE(io::WriteNpyFile(Path("x.npy"), Tensor::FromVector<float>(x, Shape{2, 3})).ok());
  auto r = Gectl({"--plugin-dir", PluginDir(), "run", Path("swish.onnx"), "--input", "X=" + Path("x.npy"),
                  "--output-dir", Path("out")});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto y = io::ReadNpyFile(Path("out/Y.npy"));
  ASSERT_TRUE(y.ok()) << y.status();
  ASSERT_EQ(y->shape(), (Shape{2, 3}));
  for (size_t i = 0; i < x.size(); ++i) {
    const float expected = x[i] / (1.0f + std::exp(-2.0f * x[i])) + x[i];
    EXPECT_NEAR(y->data<float>()[i], expected, 1e-6f) << "element " << i;
  }
}

TEST_F(CustomPluginTest, PlacesTheUserOpOnThePluginEngine) {
  auto r = Gectl({"--plugin-dir", PluginDir(), "partition", Path("swish.onnx"), "--report", "json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find(R"("name":"swish","op":"Swish","engine":"example_custom")"), std::string::npos) << r.out;
}

TEST_F(CustomPluginTest, WithoutThePluginTheOpIsUnknown) {
  auto r = Gectl({"run", Path("swish.onnx")});
  EXPECT_EQ(r.signal, 0);
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_NE(r.err.find("Swish"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("com.example"), std::string::npos) << r.err;
}

TEST_F(CustomPluginTest, AMissingPluginDirectoryIsAUserError) {
  auto r = Gectl({"--plugin-dir", Path("no-such-dir"), "run", Path("swish.onnx")});
  EXPECT_EQ(r.signal, 0);
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_NE(r.err.find("no-such-dir"), std::string::npos) << r.err;
}

}  // namespace
}  // namespace ge
