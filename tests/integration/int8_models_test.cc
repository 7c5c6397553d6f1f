// A quantized model (QDQ form: resnet_block_int8_op13, written by
// scripts/make_int8_test_model.py) end to end: the QDQ fusion pass runs in
// production (`gectl partition --report json` shows QLinearConv and
// _QLinearAdd on cpu_dense and no Conv, Add or DequantizeLinear -> Conv
// chain left); `gectl run` matches the QDQ graph's ONNX evaluation within
// one activation step; and the int8 weights travel like any other: the
// `.gem` of `gectl compile`, a cache hit and the daemon's RunGraph all give
// exactly the outputs of `gectl run` on the .onnx.
#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "base/io/npy.h"
#include "client/cpp/client.h"
#include "gtest/gtest.h"
#include "proto/value_convert.h"
#include "tests/integration/daemon_process.h"
#include "tests/integration/process.h"
#include "yaml-cpp/yaml.h"

namespace ge {
namespace {

namespace fs = std::filesystem;
using testing::RunProcess;

constexpr char kModel[] = "resnet_block_int8_op13";

std::string Gectl() { return testing::BinaryDir() + "/bin/gectl"; }
fs::path ModelDir() { return fs::path(testing::BinaryDir()) / "models" / kModel; }
std::string Onnx() { return (ModelDir() / "model.onnx").string(); }
std::string InputPath() { return (ModelDir() / "inputs" / "input.npy").string(); }

// `gectl run MODEL` (with `extra` flags) on the recorded input; the output.
Tensor RunOutput(const std::string& model, const std::vector<std::string>& extra) {
  const std::string out_dir = testing::MakeTempDir("int8-models");
  std::vector<std::string> argv = {Gectl(), "run", model, "--input", "input=" + InputPath(), "--output-dir", out_dir};
  argv.insert(argv.end(), extra.begin(), extra.end());
  testing::ProcessResult r = RunProcess(argv, 300);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  auto t = io::ReadNpyFile(out_dir + "/output.npy");
  EXPECT_TRUE(t.ok()) << t.status();
  fs::remove_all(out_dir);
  return t.ok() ? *t : Tensor();
}

::testing::AssertionResult Identical(const Tensor& a, const Tensor& b) {
  if (a.dtype() != b.dtype() || a.shape() != b.shape()) return ::testing::AssertionFailure() << "types differ";
  for (int64_t i = 0; i < a.NumElements(); ++i) {
    if (a.GetAsDouble(i) != b.GetAsDouble(i)) {
      return ::testing::AssertionFailure() << "element " << i << ": " << a.GetAsDouble(i) << " vs " << b.GetAsDouble(i);
    }
  }
  return ::testing::AssertionSuccess();
}

class Int8ModelsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(fs::exists(Onnx())) << Onnx() << " missing: run scripts/make_int8_test_model.py";
  }
};

TEST_F(Int8ModelsTest, PartitionShowsInt8KernelsOnCpuDense) {
  testing::ProcessResult r = RunProcess({Gectl(), "partition", Onnx(), "--report", "json"}, 300);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  std::map<std::string, int> on_dense, all;
  YAML::Node report = YAML::Load(r.out);
  for (const auto& node : report["nodes"]) {
    const std::string op = node["op"].as<std::string>();
    ++all[op];
    if (node["engine"].as<std::string>() == "cpu_dense") ++on_dense[op];
  }
  EXPECT_EQ(on_dense["QLinearConv"], 3) << r.out;
  EXPECT_EQ(on_dense["_QLinearAdd"], 1) << r.out;
  EXPECT_EQ(on_dense["MaxPool"], 1) << r.out;
  for (const char* gone : {"Conv", "Relu", "Gemm"}) EXPECT_EQ(all[gone], 0) << gone << " left: " << r.out;
  // The float classifier's product runs on integers (MatMulInteger, then
  // Cast, Mul by the scales and Add of its bias: the one Add left, which
  // cpu_vector's element-wise fusion runs with the Mul as one program).
  EXPECT_EQ(on_dense["MatMulInteger"], 1) << r.out;
  EXPECT_EQ(all["_FusedElementwise"], 1) << r.out;
  EXPECT_EQ(all["Mul"], 0) << r.out;
  EXPECT_EQ(all["Add"], 0) << r.out;
  // The only DequantizeLinear left feeds the float GlobalAveragePool.
  EXPECT_LE(all["DequantizeLinear"], 1) << r.out;
}

TEST_F(Int8ModelsTest, RunMatchesTheQdqGraphWithinOneStep) {
  YAML::Node meta = YAML::LoadFile((ModelDir() / "meta.json").string());
  const double atol = meta["atol"].as<double>();
  const Tensor got = RunOutput(Onnx(), {"--no-cache"});
  auto want = io::ReadNpyFile((ModelDir() / "expected" / "output.npy").string());
  ASSERT_TRUE(want.ok()) << want.status();
  ASSERT_EQ(got.shape(), want->shape());
  for (int64_t i = 0; i < got.NumElements(); ++i) {
    EXPECT_NEAR(got.GetAsDouble(i), want->GetAsDouble(i), atol) << "logit " << i;
  }
  // The reference engine alone computes the same integers.
  const Tensor host = RunOutput(Onnx(), {"--no-cache", "--option", "ge.exec.exclude_engines=cpu_dense"});
  EXPECT_TRUE(Identical(host, got));
}

TEST_F(Int8ModelsTest, GemAndCacheHitRunLikeTheOnnx) {
  const Tensor direct = RunOutput(Onnx(), {"--no-cache"});
  const std::string tmp = testing::MakeTempDir("int8-gem");
  const std::string gem = tmp + "/model.gem";
  testing::ProcessResult c = RunProcess({Gectl(), "--no-cache", "compile", Onnx(), "-o", gem}, 300);
  ASSERT_EQ(c.exit_code, 0) << c.err;
  EXPECT_NE(c.out.find("model.gem: static,"), std::string::npos) << c.out;
  EXPECT_TRUE(Identical(RunOutput(gem, {}), direct)) << "from the .gem";
  const std::string cache = tmp + "/cache";
  EXPECT_TRUE(Identical(RunOutput(Onnx(), {"--cache-dir", cache}), direct)) << "cache miss";
  EXPECT_TRUE(Identical(RunOutput(Onnx(), {"--cache-dir", cache}), direct)) << "cache hit";
  fs::remove_all(tmp);
}

TEST_F(Int8ModelsTest, DaemonRunsItLikeGectl) {
  const Tensor direct = RunOutput(Onnx(), {"--no-cache"});
  auto d = testing::DaemonProcess::Start({});
  ASSERT_NE(d, nullptr);
  client::ClientOptions options;
  options.address = d->grpc_address();
  client::Client c(options);
  std::string session;
  ASSERT_TRUE(c.CreateSession({}, &session).ok());
  v1::AddGraphResponse added;
  grpc::Status s = c.AddOnnxFile(session, 1, Onnx(), {}, &added);
  ASSERT_TRUE(s.ok()) << s.error_message();
  auto input = io::ReadNpyFile(InputPath());
  ASSERT_TRUE(input.ok()) << input.status();
  for (int run = 0; run < 2; ++run) {
    v1::RunGraphRequest request;
    request.set_session_id(session);
    request.set_graph_id(1);
    ASSERT_TRUE(rpc::ValueToProto(Value(*input), request.add_inputs()).ok());
    v1::RunGraphResponse response;
    s = c.RunGraph(request, &response);
    ASSERT_TRUE(s.ok()) << s.error_message();
    ASSERT_EQ(response.outputs_size(), 1);
    auto got = rpc::ValueFromProto(response.outputs(0), "output");
    ASSERT_TRUE(got.ok()) << got.status();
    EXPECT_TRUE(Identical(got->tensor(), direct)) << "run " << run;
  }
}

}  // namespace
}  // namespace ge
