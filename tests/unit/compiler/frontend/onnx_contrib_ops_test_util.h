// The shared part of the contrib-op tests (onnx_contrib_ops_test.cc, the
// importer and the quantized ops; onnx_contrib_transformer_test.cc, the
// transformer and fused ops): model builders for com.microsoft nodes,
// quantization references, and ContribOpsTest, which imports, compiles and
// runs a model on the built-in engines.
#pragma once

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "compiler/frontend/onnx_contrib_ops.h"
#include "compiler/frontend/onnx_importer.h"
#include "gtest/gtest.h"
#include "session/session.h"
#include "tests/testing/engines_test.h"
#include "tests/testing/kernel_test_util.h"
#include "tests/testing/onnx_builder.h"

namespace ge::frontend::contrib_test {

using namespace ::ge::onnx_builder;  // NOLINT

inline constexpr int32_t kU8 = onnx::TensorProto::UINT8;
inline constexpr int32_t kS8 = onnx::TensorProto::INT8;
inline constexpr int32_t kI32 = onnx::TensorProto::INT32;

inline onnx::ModelProto MsModel(int64_t opset = 13) {
  onnx::ModelProto model = MakeModel(opset);
  auto* imp = model.add_opset_import();
  imp->set_domain(kMicrosoftDomain);
  imp->set_version(1);
  return model;
}

inline onnx::NodeProto* MsNode(onnx::GraphProto* g, const std::string& op, const std::vector<std::string>& in,
                               const std::vector<std::string>& out) {
  onnx::NodeProto* n = AddNode(g, op, in, out, op + "_node");
  n->set_domain(kMicrosoftDomain);
  return n;
}

template <typename T>
void AddScalar(onnx::GraphProto* g, const std::string& name, T v) {
  AddInitializer(g, name, Tensor::Scalar<T>(v));
}

// Quantization parameters of one tensor.
struct QP {
  float scale;
  int zero;
};

template <typename T>
T Quantize(double v, QP q) {
  const double r = std::nearbyint(v / q.scale) + q.zero;
  return static_cast<T>(std::clamp(r, double{std::numeric_limits<T>::min()}, double{std::numeric_limits<T>::max()}));
}
template <typename T>
double Dequant(T v, QP q) {
  return (static_cast<double>(v) - q.zero) * q.scale;
}

template <typename T>
Tensor RandomInts(const Shape& shape, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_int_distribution<int> dist(std::numeric_limits<T>::min(), std::numeric_limits<T>::max());
  std::vector<T> v(static_cast<size_t>(shape.NumElementsUnchecked()));
  for (T& x : v) x = static_cast<T>(dist(rng));
  return Tensor::FromVector<T>(v, shape);
}

// Within one integer step everywhere; the failure names the first index.
inline ::testing::AssertionResult WithinOneStep(const Tensor& got, const Tensor& want) {
  if (got.dtype() != want.dtype() || got.shape() != want.shape()) {
    return ::testing::AssertionFailure() << "got " << got.DebugString() << ", want " << want.DebugString();
  }
  for (int64_t i = 0; i < got.NumElements(); ++i) {
    if (std::abs(got.GetAsDouble(i) - want.GetAsDouble(i)) > 1) {
      return ::testing::AssertionFailure()
             << "element " << i << ": " << got.GetAsDouble(i) << " vs " << want.GetAsDouble(i);
    }
  }
  return ::testing::AssertionSuccess();
}

class ContribOpsTest : public ge::testing::EnginesTest {
 public:
  // Imports, compiles and runs the model; with `exclude`, those engines are
  // left out (ge.exec.exclude_engines).
  std::vector<Tensor> Run(const onnx::ModelProto& model, const std::vector<Tensor>& inputs,
                          const std::string& exclude = "") {
    auto graph = ImportOnnxModel(model, "");
    EXPECT_TRUE(graph.ok()) << graph.status();
    if (!graph.ok()) return {};
    OptionMap options;
    if (!exclude.empty()) options["ge.exec.exclude_engines"] = exclude;
    session::Session session(*engines_, options, &pool_);
    absl::Status added = session.AddGraph(1, std::move(*graph));
    EXPECT_TRUE(added.ok()) << added;
    std::vector<Value> values(inputs.begin(), inputs.end());
    auto result = session.RunGraph(1, values);
    EXPECT_TRUE(result.ok()) << result.status();
    std::vector<Tensor> out;
    if (result.ok()) {
      for (const Value& v : *result) out.push_back(v.tensor());
    }
    return out;
  }

  // The op types of the imported (not compiled) graph.
  static std::map<std::string, int> ImportedOps(const onnx::ModelProto& model) {
    std::map<std::string, int> ops;
    auto graph = ImportOnnxModel(model, "");
    EXPECT_TRUE(graph.ok()) << graph.status();
    if (graph.ok()) (*graph)->ForEachNode([&](const ir::Node* n) { ++ops[n->type()]; });
    return ops;
  }

  ThreadPool pool_{1, "contrib-ops-test"};
};

}  // namespace ge::frontend::contrib_test
