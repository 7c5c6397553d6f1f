// resnet18 through the daemon: ONNX bytes over AddGraph, the fixture's
// inputs over RunGraph, outputs compared with torch's
// (scripts/make_test_models.py writes both; ctest fixture test_models).
#include <cmath>
#include <filesystem>
#include <sstream>

#include "base/io/npy.h"
#include "client/cpp/client.h"
#include "proto/value_convert.h"
#include "gtest/gtest.h"
#include "tests/integration/daemon_process.h"
#include "tests/integration/process.h"
#include "yaml-cpp/yaml.h"

namespace ge {
namespace {

namespace fs = std::filesystem;

std::string Compare(const Tensor& actual, const Tensor& expected, double atol) {
  if (actual.dtype() != expected.dtype() || actual.shape() != expected.shape()) {
    return "type mismatch: got " + actual.DebugString(0) + ", expected " + expected.DebugString(0);
  }
  double worst = 0;
  for (int64_t i = 0; i < actual.NumElements(); ++i) {
    const double diff = std::abs(actual.GetAsDouble(i) - expected.GetAsDouble(i));
    if (!(diff <= worst)) worst = diff;
  }
  if (worst <= atol) return "";
  std::ostringstream msg;
  msg << "max abs difference " << worst << " > " << atol;
  return msg.str();
}

TEST(DaemonModelsTest, Resnet18OverRunGraphMatchesTorch) {
  const fs::path dir = fs::path(testing::BinaryDir()) / "models" / "resnet18_op13";
  ASSERT_TRUE(fs::exists(dir / "model.onnx")) << dir << " missing: run scripts/make_test_models.py";
  YAML::Node meta = YAML::LoadFile((dir / "meta.json").string());
  auto d = testing::DaemonProcess::Start({});
  ASSERT_NE(d, nullptr);
  client::ClientOptions options;
  options.address = d->grpc_address();
  client::Client c(options);
  std::string session;
  ASSERT_TRUE(c.CreateSession({}, &session).ok());
  v1::AddGraphResponse added;
  grpc::Status s = c.AddOnnxFile(session, 1, (dir / "model.onnx").string(), {}, &added);
  ASSERT_TRUE(s.ok()) << s.error_message();

  v1::RunGraphRequest request;
  request.set_session_id(session);
  request.set_graph_id(1);
  for (const auto& input : meta["inputs"]) {
    auto t = io::ReadNpyFile((dir / "inputs" / (input.as<std::string>() + ".npy")).string());
    ASSERT_TRUE(t.ok()) << t.status();
    ASSERT_TRUE(rpc::ValueToProto(Value(*t), request.add_inputs()).ok());
  }
  v1::RunGraphResponse response;
  s = c.RunGraph(request, &response);
  ASSERT_TRUE(s.ok()) << s.error_message();
  int i = 0;
  for (const auto& output : meta["outputs"]) {
    const std::string name = output.as<std::string>();
    ASSERT_LT(i, response.outputs_size());
    auto actual = rpc::ValueFromProto(response.outputs(i++), name);
    ASSERT_TRUE(actual.ok()) << actual.status();
    auto expected = io::ReadNpyFile((dir / "expected" / (name + ".npy")).string());
    ASSERT_TRUE(expected.ok()) << expected.status();
    EXPECT_EQ(Compare(actual->tensor(), *expected, meta["atol"].as<double>()), "") << "output " << name;
  }
}

}  // namespace
}  // namespace ge
