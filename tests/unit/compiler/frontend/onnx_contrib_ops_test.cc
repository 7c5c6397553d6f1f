// ONNX Runtime's com.microsoft contrib ops (compiler/frontend/onnx_contrib_ops.h):
// what the importer makes of them, its errors, and their values end to end
// (import, compile, run on the built-in engines) against references written
// here from ONNX Runtime's definitions (ContribOperators.md).
//
// Quantized results are compared within one quantization step: ONNX Runtime
// computes each of these ops in its own order of float operations (a lookup
// table for QLinearSigmoid / QLinearLeakyRelu, fixed-point sums for the
// pools), so a value that lands within float rounding of a .5 may round to
// either neighbour. The references below round in double; anything further
// than one step is a real error.
#include <algorithm>
#include <cmath>
#include <map>
#include <random>

#include "compiler/frontend/onnx_contrib_ops.h"
#include "compiler/frontend/onnx_importer.h"
#include "gtest/gtest.h"
#include "session/session.h"
#include "tests/testing/engines_test.h"
#include "tests/testing/kernel_test_util.h"
#include "tests/testing/onnx_builder.h"

namespace ge::frontend {
namespace {

using namespace ::ge::onnx_builder;  // NOLINT

constexpr int32_t kU8 = onnx::TensorProto::UINT8;
constexpr int32_t kS8 = onnx::TensorProto::INT8;
constexpr int32_t kI32 = onnx::TensorProto::INT32;

onnx::ModelProto MsModel(int64_t opset = 13) {
  onnx::ModelProto model = MakeModel(opset);
  auto* imp = model.add_opset_import();
  imp->set_domain(kMicrosoftDomain);
  imp->set_version(1);
  return model;
}

onnx::NodeProto* MsNode(onnx::GraphProto* g, const std::string& op, const std::vector<std::string>& in,
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
::testing::AssertionResult WithinOneStep(const Tensor& got, const Tensor& want) {
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

  // Attention (2-D mask) against the reference; `causal`: unidirectional.
  void CheckAttention(bool causal);

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

// ---------------------------------------------------------------- importer

TEST_F(ContribOpsTest, AnUnsupportedContribOpNamesTheOpAndTheDomain) {
  onnx::ModelProto model = MsModel();
  onnx::GraphProto* g = model.mutable_graph();
  AddInput(g, "x", kF32, {2, 3});
  MsNode(g, "Inverse", {"x"}, {"y"});
  AddOutputOfRank(g, "y", kF32, 2);
  auto graph = ImportOnnxModel(model, "");
  ASSERT_FALSE(graph.ok());
  const std::string message(graph.status().message());
  EXPECT_NE(message.find("'Inverse'"), std::string::npos) << message;
  EXPECT_NE(message.find("com.microsoft"), std::string::npos) << message;
  EXPECT_NE(message.find("QLinearAdd"), std::string::npos) << "lists what ged lowers: " << message;
}

TEST_F(ContribOpsTest, DynamicQuantizeLstmIsRefusedByName) {
  onnx::ModelProto model = MsModel();
  onnx::GraphProto* g = model.mutable_graph();
  AddInput(g, "x", kF32, {1, 4, 8});
  MsNode(g, "DynamicQuantizeLSTM", {"x"}, {"y"});
  AddOutputOfRank(g, "y", kF32, 3);
  auto graph = ImportOnnxModel(model, "");
  ASSERT_FALSE(graph.ok());
  EXPECT_NE(std::string(graph.status().message()).find("'DynamicQuantizeLSTM' (domain 'com.microsoft'"),
            std::string::npos)
      << graph.status();
}

TEST_F(ContribOpsTest, ContribOpsNeedOpset11) {
  onnx::ModelProto model = MsModel(10);
  onnx::GraphProto* g = model.mutable_graph();
  AddInput(g, "x", kF32, {2});
  MsNode(g, "Gelu", {"x"}, {"y"});
  AddOutputOfRank(g, "y", kF32, 1);
  auto graph = ImportOnnxModel(model, "");
  ASSERT_FALSE(graph.ok());
  EXPECT_NE(std::string(graph.status().message()).find("opset 10"), std::string::npos) << graph.status();
}

TEST_F(ContribOpsTest, LoweredOpsAreListedSorted) {
  const std::vector<std::string> ops = LoweredContribOps();
  EXPECT_TRUE(std::is_sorted(ops.begin(), ops.end()));
  for (const char* op : {"QLinearAdd", "QGemm", "SkipLayerNormalization", "FastGelu", "Attention"}) {
    EXPECT_NE(std::find(ops.begin(), ops.end(), op), ops.end()) << op;
  }
}

// ---------------------------------------------------------------- quantized ops

// QLinearAdd of one shape: the QDQ fusion keeps it int8 (_QLinearAdd).
onnx::ModelProto QLinearBinary(const std::string& op, int32_t elem, const std::vector<int64_t>& a_dims,
                               const std::vector<int64_t>& b_dims, QP a, QP b, QP c, bool s8) {
  onnx::ModelProto model = MsModel();
  onnx::GraphProto* g = model.mutable_graph();
  AddInput(g, "a", elem, a_dims);
  AddInput(g, "b", elem, b_dims);
  AddScalar<float>(g, "as", a.scale);
  AddScalar<float>(g, "bs", b.scale);
  AddScalar<float>(g, "cs", c.scale);
  if (s8) {
    AddScalar<int8_t>(g, "az", static_cast<int8_t>(a.zero));
    AddScalar<int8_t>(g, "bz", static_cast<int8_t>(b.zero));
    AddScalar<int8_t>(g, "cz", static_cast<int8_t>(c.zero));
  } else {
    AddScalar<uint8_t>(g, "az", static_cast<uint8_t>(a.zero));
    AddScalar<uint8_t>(g, "bz", static_cast<uint8_t>(b.zero));
    AddScalar<uint8_t>(g, "cz", static_cast<uint8_t>(c.zero));
  }
  MsNode(g, op, {"a", "as", "az", "b", "bs", "bz", "cs", "cz"}, {"c"});
  AddOutputOfRank(g, "c", elem, static_cast<int>(std::max(a_dims.size(), b_dims.size())));
  return model;
}

template <typename T>
Tensor BinaryReference(const std::string& op, const Tensor& a, const Tensor& b, const Shape& out_shape, QP qa, QP qb,
                       QP qc) {
  // Broadcast by the ONNX rule (b's dims aligned right, 1 stretched).
  const int rank = out_shape.rank();
  std::vector<T> out(static_cast<size_t>(out_shape.NumElementsUnchecked()));
  auto index = [&](const Shape& s, int64_t flat) {
    int64_t idx = 0, stride = 1, rem = flat;
    std::vector<int64_t> coord(static_cast<size_t>(rank));
    for (int d = rank - 1; d >= 0; --d) {
      coord[static_cast<size_t>(d)] = rem % out_shape.dim(d);
      rem /= out_shape.dim(d);
    }
    for (int d = s.rank() - 1; d >= 0; --d) {
      const int64_t c = coord[static_cast<size_t>(d + rank - s.rank())];
      idx += (s.dim(d) == 1 ? 0 : c) * stride;
      stride *= s.dim(d);
    }
    return idx;
  };
  for (int64_t i = 0; i < static_cast<int64_t>(out.size()); ++i) {
    const double x = Dequant(a.data<T>()[index(a.shape(), i)], qa);
    const double y = Dequant(b.data<T>()[index(b.shape(), i)], qb);
    out[static_cast<size_t>(i)] = Quantize<T>(op == "QLinearAdd" ? x + y : x * y, qc);
  }
  return Tensor::FromVector<T>(out, out_shape);
}

TEST_F(ContribOpsTest, QLinearAddOfOneShapeRunsInt8AndMatchesOnEveryEngine) {
  // Zero points at the ends of the range: saturation on both sides.
  const QP qa{0.05f, 0}, qb{0.03f, 255}, qc{0.04f, 128};
  const onnx::ModelProto model = QLinearBinary("QLinearAdd", kU8, {2, 3, 5, 7}, {2, 3, 5, 7}, qa, qb, qc, false);
  const std::map<std::string, int> ops = ImportedOps(model);
  EXPECT_EQ(ops.count("Add"), 1u) << "imported as DQ -> Add -> Q";
  const Tensor a = RandomInts<uint8_t>(Shape{2, 3, 5, 7}, 1), b = RandomInts<uint8_t>(Shape{2, 3, 5, 7}, 2);
  const Tensor want = BinaryReference<uint8_t>("QLinearAdd", a, b, Shape{2, 3, 5, 7}, qa, qb, qc);
  std::vector<Tensor> dense = Run(model, {a, b});
  ASSERT_EQ(dense.size(), 1u);
  EXPECT_TRUE(WithinOneStep(dense[0], want));
  std::vector<Tensor> host = Run(model, {a, b}, "cpu_dense,cpu_vector,cpu_fused");
  ASSERT_EQ(host.size(), 1u);
  EXPECT_TRUE(WithinOneStep(host[0], want));
}

TEST_F(ContribOpsTest, QLinearAddBroadcastsS8) {
  const QP qa{0.02f, -128}, qb{0.5f, 127}, qc{0.1f, -3};
  const onnx::ModelProto model = QLinearBinary("QLinearAdd", kS8, {1, 4, 3, 3}, {1, 4, 1, 1}, qa, qb, qc, true);
  const Tensor a = RandomInts<int8_t>(Shape{1, 4, 3, 3}, 3), b = RandomInts<int8_t>(Shape{1, 4, 1, 1}, 4);
  std::vector<Tensor> got = Run(model, {a, b});
  ASSERT_EQ(got.size(), 1u);
  EXPECT_TRUE(WithinOneStep(got[0], BinaryReference<int8_t>("QLinearAdd", a, b, Shape{1, 4, 3, 3}, qa, qb, qc)));
}

TEST_F(ContribOpsTest, QLinearMulBroadcastsAndSaturates) {
  const QP qa{0.1f, 10}, qb{0.2f, 250}, qc{0.05f, 0};
  const onnx::ModelProto model = QLinearBinary("QLinearMul", kU8, {3, 1, 5}, {4, 1}, qa, qb, qc, false);
  const Tensor a = RandomInts<uint8_t>(Shape{3, 1, 5}, 5), b = RandomInts<uint8_t>(Shape{4, 1}, 6);
  std::vector<Tensor> got = Run(model, {a, b});
  ASSERT_EQ(got.size(), 1u);
  EXPECT_TRUE(WithinOneStep(got[0], BinaryReference<uint8_t>("QLinearMul", a, b, Shape{3, 4, 5}, qa, qb, qc)));
}

TEST_F(ContribOpsTest, QLinearAddOfOneElement) {
  const QP qa{1.0f, 0}, qb{1.0f, 0}, qc{1.0f, 0};
  const onnx::ModelProto model = QLinearBinary("QLinearAdd", kU8, {1}, {1}, qa, qb, qc, false);
  std::vector<Tensor> got =
      Run(model, {Tensor::FromVector<uint8_t>({200}, Shape{1}), Tensor::FromVector<uint8_t>({100}, Shape{1})});
  ASSERT_EQ(got.size(), 1u);
  EXPECT_TRUE(test::TensorEq(got[0], Tensor::FromVector<uint8_t>({255}, Shape{1}))) << "saturates";
}

// Unary QLinear ops over every u8 / s8 value.
template <typename T>
void CheckUnary(ContribOpsTest& t, const std::string& op, QP qx, QP qy, const std::function<double(double)>& f,
                const std::function<void(onnx::NodeProto*)>& attrs = nullptr) {
  const int32_t elem = std::is_same_v<T, uint8_t> ? kU8 : kS8;
  onnx::ModelProto model = MsModel();
  onnx::GraphProto* g = model.mutable_graph();
  AddInput(g, "x", elem, {256});
  AddScalar<float>(g, "xs", qx.scale);
  AddScalar<T>(g, "xz", static_cast<T>(qx.zero));
  AddScalar<float>(g, "ys", qy.scale);
  AddScalar<T>(g, "yz", static_cast<T>(qy.zero));
  onnx::NodeProto* n = MsNode(g, op, {"x", "xs", "xz", "ys", "yz"}, {"y"});
  if (attrs) attrs(n);
  AddOutputOfRank(g, "y", elem, 1);
  std::vector<T> all(256), want(256);
  for (int i = 0; i < 256; ++i) {
    all[static_cast<size_t>(i)] = static_cast<T>(std::numeric_limits<T>::min() + i);
    want[static_cast<size_t>(i)] = Quantize<T>(f(Dequant(all[static_cast<size_t>(i)], qx)), qy);
  }
  std::vector<Tensor> got = t.Run(model, {Tensor::FromVector<T>(all, Shape{256})});
  ASSERT_EQ(got.size(), 1u);
  EXPECT_TRUE(WithinOneStep(got[0], Tensor::FromVector<T>(want, Shape{256}))) << op;
}

TEST_F(ContribOpsTest, QLinearSigmoidAndLeakyReluOverEveryValue) {
  CheckUnary<uint8_t>(*this, "QLinearSigmoid", {0.06f, 128}, {1.0f / 256, 0},
                      [](double x) { return 1 / (1 + std::exp(-x)); });
  CheckUnary<int8_t>(*this, "QLinearSigmoid", {0.1f, -20}, {1.0f / 255, -128},
                     [](double x) { return 1 / (1 + std::exp(-x)); });
  CheckUnary<int8_t>(
      *this, "QLinearLeakyRelu", {0.05f, 0}, {0.04f, 5}, [](double x) { return x >= 0 ? x : 0.1 * x; },
      [](onnx::NodeProto* n) { AttrFloat(n, "alpha", 0.1f); });
  CheckUnary<uint8_t>(*this, "QLinearLeakyRelu", {0.05f, 255}, {0.02f, 255},
                      [](double x) { return x >= 0 ? x : 0.01 * x; });
}

TEST_F(ContribOpsTest, QLinearSoftmaxLastAxis) {
  onnx::ModelProto model = MsModel();
  onnx::GraphProto* g = model.mutable_graph();
  AddInput(g, "x", kU8, {3, 7});
  AddScalar<float>(g, "xs", 0.1f);
  AddScalar<uint8_t>(g, "xz", 100);
  AddScalar<float>(g, "ys", 1.0f / 256);
  AddScalar<uint8_t>(g, "yz", 0);
  onnx::NodeProto* n = MsNode(g, "QLinearSoftmax", {"x", "xs", "xz", "ys", "yz"}, {"y"});
  AttrInt(n, "axis", -1);
  AttrInt(n, "opset", 13);
  AddOutputOfRank(g, "y", kU8, 2);
  const Tensor x = RandomInts<uint8_t>(Shape{3, 7}, 9);
  std::vector<uint8_t> want(21);
  for (int r = 0; r < 3; ++r) {
    double sum = 0;
    std::vector<double> e(7);
    for (int c = 0; c < 7; ++c) sum += e[c] = std::exp(Dequant(x.data<uint8_t>()[r * 7 + c], {0.1f, 100}));
    for (int c = 0; c < 7; ++c) want[r * 7 + c] = Quantize<uint8_t>(e[c] / sum, {1.0f / 256, 0});
  }
  std::vector<Tensor> got = Run(model, {x});
  ASSERT_EQ(got.size(), 1u);
  EXPECT_TRUE(WithinOneStep(got[0], Tensor::FromVector<uint8_t>(want, Shape{3, 7})));
}

TEST_F(ContribOpsTest, QLinearGlobalAndWindowAveragePools) {
  const QP qx{0.07f, 3}, qy{0.02f, 250};
  for (const bool global : {true, false}) {
    onnx::ModelProto model = MsModel();
    onnx::GraphProto* g = model.mutable_graph();
    AddInput(g, "x", kU8, {2, 3, 5, 7});
    AddScalar<float>(g, "xs", qx.scale);
    AddScalar<uint8_t>(g, "xz", static_cast<uint8_t>(qx.zero));
    AddScalar<float>(g, "ys", qy.scale);
    AddScalar<uint8_t>(g, "yz", static_cast<uint8_t>(qy.zero));
    onnx::NodeProto* n =
        MsNode(g, global ? "QLinearGlobalAveragePool" : "QLinearAveragePool", {"x", "xs", "xz", "ys", "yz"}, {"y"});
    AttrInt(n, "channels_last", 0);
    if (!global) {
      AttrInts(n, "kernel_shape", {3, 3});
      AttrInts(n, "strides", {2, 2});
      AttrInts(n, "pads", {1, 1, 1, 1});
      AttrInt(n, "count_include_pad", 0);
    }
    AddOutputOfRank(g, "y", kU8, 4);
    const Tensor x = RandomInts<uint8_t>(Shape{2, 3, 5, 7}, 11);
    const int64_t oh = global ? 1 : 3, ow = global ? 1 : 4;
    std::vector<uint8_t> want;
    for (int64_t nc = 0; nc < 6; ++nc) {
      for (int64_t i = 0; i < oh; ++i) {
        for (int64_t j = 0; j < ow; ++j) {
          double sum = 0;
          int count = 0;
          for (int64_t h = 0; h < 5; ++h) {
            for (int64_t w = 0; w < 7; ++w) {
              if (!global && (h < i * 2 - 1 || h > i * 2 + 1 || w < j * 2 - 1 || w > j * 2 + 1)) continue;
              sum += Dequant(x.data<uint8_t>()[nc * 35 + h * 7 + w], qx);
              ++count;
            }
          }
          want.push_back(Quantize<uint8_t>(sum / count, qy));
        }
      }
    }
    std::vector<Tensor> got = Run(model, {x});
    ASSERT_EQ(got.size(), 1u);
    EXPECT_TRUE(WithinOneStep(got[0], Tensor::FromVector<uint8_t>(want, Shape{2, 3, oh, ow}))) << global;
  }
}

TEST_F(ContribOpsTest, QLinearConcatOfOneScaleConcatenatesTheIntegers) {
  for (const bool same : {true, false}) {
    onnx::ModelProto model = MsModel();
    onnx::GraphProto* g = model.mutable_graph();
    AddInput(g, "a", kU8, {2, 3});
    AddInput(g, "b", kU8, {2, 1});
    AddScalar<float>(g, "ys", 0.1f);
    AddScalar<uint8_t>(g, "yz", 7);
    AddScalar<float>(g, "bs", same ? 0.1f : 0.3f);
    AddScalar<uint8_t>(g, "bz", same ? 7 : 200);
    onnx::NodeProto* n = MsNode(g, "QLinearConcat", {"ys", "yz", "a", "ys", "yz", "b", "bs", "bz"}, {"y"});
    AttrInt(n, "axis", 1);
    AddOutputOfRank(g, "y", kU8, 2);
    const std::map<std::string, int> ops = ImportedOps(model);
    EXPECT_EQ(ops.count("DequantizeLinear"), same ? 0u : 1u);
    const Tensor a = Tensor::FromVector<uint8_t>({0, 1, 255, 3, 4, 5}, Shape{2, 3});
    const Tensor b = Tensor::FromVector<uint8_t>({0, 255}, Shape{2, 1});
    std::vector<uint8_t> want = {0, 1, 255, 0, 3, 4, 5, 255};
    if (!same) {
      want[3] = Quantize<uint8_t>(Dequant<uint8_t>(0, {0.3f, 200}), {0.1f, 7});
      want[7] = Quantize<uint8_t>(Dequant<uint8_t>(255, {0.3f, 200}), {0.1f, 7});
    }
    std::vector<Tensor> got = Run(model, {a, b});
    ASSERT_EQ(got.size(), 1u);
    const Tensor w = Tensor::FromVector<uint8_t>(want, Shape{2, 4});
    EXPECT_TRUE(same ? test::TensorEq(got[0], w) : WithinOneStep(got[0], w)) << same;
  }
}

// ONNX Runtime's NHWC forms (its layout transformer's saved models):
// QLinearConv and QLinearAveragePool with channels_last 1 and NhwcMaxPool,
// against the NCHW ops between Transposes, exactly.
TEST_F(ContribOpsTest, ChannelsLastFormsMatchTheNchwOps) {
  const Tensor w = RandomInts<int8_t>(Shape{4, 3, 3, 3}, 121);
  auto make = [&](bool nhwc) {
    onnx::ModelProto model = MsModel();
    onnx::GraphProto* g = model.mutable_graph();
    AddInput(g, "x", kU8, {1, 7, 6, 3});  // NHWC
    AddScalar<float>(g, "xs", 0.05f);
    AddScalar<uint8_t>(g, "xz", 128);
    AddInitializer(g, "w", w);
    AddInitializer(g, "ws", Tensor::FromVector<float>({0.01f, 0.02f, 0.03f, 0.04f}, Shape{4}));
    AddInitializer(g, "wz", Tensor::FromVector<int8_t>({0, 0, 0, 0}, Shape{4}));
    AddScalar<float>(g, "ys", 0.1f);
    AddScalar<uint8_t>(g, "yz", 10);
    std::string x = "x";
    if (!nhwc) {
      AttrInts(AddNode(g, "Transpose", {"x"}, {"xt"}, "t_in"), "perm", {0, 3, 1, 2});
      x = "xt";
    }
    onnx::NodeProto* conv = MsNode(g, "QLinearConv", {x, "xs", "xz", "w", "ws", "wz", "ys", "yz"}, {"c"});
    AttrInts(conv, "pads", {1, 1, 1, 1});
    AttrInt(conv, "channels_last", nhwc ? 1 : 0);
    onnx::NodeProto* pool = nhwc ? MsNode(g, "NhwcMaxPool", {"c"}, {"p"}) : AddNode(g, "MaxPool", {"c"}, {"p"}, "mp");
    AttrInts(pool, "kernel_shape", {2, 2});
    AttrInts(pool, "strides", {1, 1});
    onnx::NodeProto* avg = MsNode(g, "QLinearAveragePool", {"p", "ys", "yz", "xs", "xz"}, {"a"});
    AttrInts(avg, "kernel_shape", {3, 3});
    AttrInts(avg, "strides", {2, 2});
    AttrInt(avg, "channels_last", nhwc ? 1 : 0);
    if (!nhwc) AttrInts(AddNode(g, "Transpose", {"a"}, {"y"}, "t_out"), "perm", {0, 2, 3, 1});
    if (nhwc) AddNode(g, "Identity", {"a"}, {"y"}, "id");
    AddOutputOfRank(g, "y", kU8, 4);
    return model;
  };
  const Tensor x = RandomInts<uint8_t>(Shape{1, 7, 6, 3}, 122);
  std::vector<Tensor> nhwc = Run(make(true), {x}), nchw = Run(make(false), {x});
  ASSERT_EQ(nhwc.size(), 1u);
  ASSERT_EQ(nchw.size(), 1u);
  EXPECT_EQ(nhwc[0].shape(), (Shape{1, 2, 2, 4}));
  EXPECT_TRUE(test::TensorEq(nhwc[0], nchw[0]));
}

// QGemm: u8 A, s8 B per column, int32 C; quantized and float outputs.
TEST_F(ContribOpsTest, QGemmPerColumnWithBiasQuantizedAndFloat) {
  constexpr int64_t M = 3, K = 5, N = 4;
  const QP qa{0.05f, 120};
  const std::vector<float> bs = {0.01f, 0.02f, 0.03f, 0.04f};
  const QP qy{0.08f, 10};
  const Tensor b = RandomInts<int8_t>(Shape{N, K}, 21);  // transB 1
  const std::vector<int32_t> c = {100, -50, 0, 2000};
  for (const bool quantized : {true, false}) {
    onnx::ModelProto model = MsModel();
    onnx::GraphProto* g = model.mutable_graph();
    AddInput(g, "a", kU8, {M, K});
    AddScalar<float>(g, "as", qa.scale);
    AddScalar<uint8_t>(g, "az", static_cast<uint8_t>(qa.zero));
    AddInitializer(g, "b", b);
    AddInitializer(g, "bs", Tensor::FromVector<float>(bs, Shape{N}));
    AddInitializer(g, "bz", Tensor::FromVector<int8_t>(std::vector<int8_t>(N, 0), Shape{N}));
    AddInitializer(g, "c", Tensor::FromVector<int32_t>(c, Shape{N}));
    AddScalar<float>(g, "ys", qy.scale);
    AddScalar<uint8_t>(g, "yz", static_cast<uint8_t>(qy.zero));
    std::vector<std::string> in = {"a", "as", "az", "b", "bs", "bz", "c"};
    if (quantized) in.insert(in.end(), {"ys", "yz"});
    onnx::NodeProto* n = MsNode(g, "QGemm", in, {"y"});
    AttrInt(n, "transB", 1);
    AttrFloat(n, "alpha", 1.0f);
    AddOutputOfRank(g, "y", quantized ? kU8 : kF32, 2);
    const Tensor a = RandomInts<uint8_t>(Shape{M, K}, 22);
    std::vector<double> acc(M * N);
    for (int64_t i = 0; i < M; ++i) {
      for (int64_t j = 0; j < N; ++j) {
        double s = 0;
        for (int64_t k = 0; k < K; ++k) {
          s += (a.data<uint8_t>()[i * K + k] - qa.zero) * static_cast<double>(b.data<int8_t>()[j * K + k]);
        }
        acc[i * N + j] = (s + c[j]) * qa.scale * bs[j];
      }
    }
    std::vector<Tensor> got = Run(model, {a});
    ASSERT_EQ(got.size(), 1u);
    if (quantized) {
      std::vector<uint8_t> want;
      for (double v : acc) want.push_back(Quantize<uint8_t>(v, qy));
      EXPECT_TRUE(WithinOneStep(got[0], Tensor::FromVector<uint8_t>(want, Shape{M, N})));
    } else {
      std::vector<float> want(acc.begin(), acc.end());
      EXPECT_TRUE(test::TensorNear(got[0], Tensor::FromVector<float>(want, Shape{M, N}), {1e-4, 1e-4}));
    }
  }
}

TEST_F(ContribOpsTest, MatMulIntegerToFloatAndDynamicQuantizeMatMul) {
  constexpr int64_t M = 2, K = 6, N = 3;
  const Tensor b = RandomInts<int8_t>(Shape{K, N}, 31);
  const std::vector<float> bias = {0.5f, -1.0f, 2.0f};
  {
    onnx::ModelProto model = MsModel();
    onnx::GraphProto* g = model.mutable_graph();
    AddInput(g, "a", kU8, {M, K});
    AddInitializer(g, "b", b);
    AddScalar<float>(g, "as", 0.02f);
    AddScalar<float>(g, "bs", 0.03f);
    AddScalar<uint8_t>(g, "az", 128);
    AddInitializer(g, "bias", Tensor::FromVector<float>(bias, Shape{N}));
    MsNode(g, "MatMulIntegerToFloat", {"a", "b", "as", "bs", "az", "", "bias"}, {"y"});
    AddOutputOfRank(g, "y", kF32, 2);
    const Tensor a = RandomInts<uint8_t>(Shape{M, K}, 32);
    std::vector<float> want(M * N);
    for (int64_t i = 0; i < M; ++i) {
      for (int64_t j = 0; j < N; ++j) {
        double s = 0;
        for (int64_t k = 0; k < K; ++k) s += (a.data<uint8_t>()[i * K + k] - 128.0) * b.data<int8_t>()[k * N + j];
        want[i * N + j] = static_cast<float>(s * 0.02 * 0.03 + bias[j]);
      }
    }
    std::vector<Tensor> got = Run(model, {a});
    ASSERT_EQ(got.size(), 1u);
    EXPECT_TRUE(test::TensorNear(got[0], Tensor::FromVector<float>(want, Shape{M, N}), {1e-4, 1e-4}));
  }
  {
    onnx::ModelProto model = MsModel();
    onnx::GraphProto* g = model.mutable_graph();
    AddInput(g, "a", kF32, {M, K});
    AddInitializer(g, "b", b);
    AddScalar<float>(g, "bs", 0.03f);
    AddInitializer(g, "bias", Tensor::FromVector<float>(bias, Shape{N}));
    MsNode(g, "DynamicQuantizeMatMul", {"a", "b", "bs", "", "bias"}, {"y"});
    AddOutputOfRank(g, "y", kF32, 2);
    const Tensor a = test::RandomTensor(DataType::kFloat, Shape{M, K}, 33);
    std::vector<float> want(M * N);
    for (int64_t i = 0; i < M; ++i) {
      for (int64_t j = 0; j < N; ++j) {
        double s = 0;
        for (int64_t k = 0; k < K; ++k) s += a.data<float>()[i * K + k] * b.data<int8_t>()[k * N + j] * 0.03;
        want[i * N + j] = static_cast<float>(s + bias[j]);
      }
    }
    std::vector<Tensor> got = Run(model, {a});
    ASSERT_EQ(got.size(), 1u);
    // A is quantized to u8 over its range [-1, 1]: 2/255 per step, times
    // K products of |b| * 0.03 <= 3.81.
    EXPECT_TRUE(test::TensorNear(got[0], Tensor::FromVector<float>(want, Shape{M, N}), {0.1, 0}));
  }
}

// ---------------------------------------------------------------- transformer ops

double Erf(double x) { return std::erf(x); }

TEST_F(ContribOpsTest, GeluFamily) {
  const Tensor x = test::RandomTensor(DataType::kFloat, Shape{2, 9}, 41, -4, 4);
  const Tensor bias = test::RandomTensor(DataType::kFloat, Shape{9}, 42);
  struct Case {
    std::string op;
    bool with_bias;
    std::function<double(double)> f;
  };
  const std::vector<Case> cases = {
      {"Gelu", false, [](double v) { return 0.5 * v * (1 + Erf(v / std::sqrt(2.0))); }},
      {"BiasGelu", true, [](double v) { return 0.5 * v * (1 + Erf(v / std::sqrt(2.0))); }},
      {"FastGelu", true,
       [](double v) { return 0.5 * v * (1 + std::tanh(std::sqrt(2 / M_PI) * (v + 0.044715 * v * v * v))); }},
      {"QuickGelu", false, [](double v) { return v / (1 + std::exp(-1.702 * v)); }},
  };
  for (const Case& c : cases) {
    onnx::ModelProto model = MsModel();
    onnx::GraphProto* g = model.mutable_graph();
    AddInput(g, "x", kF32, {2, 9});
    AddInitializer(g, "bias", bias);
    MsNode(g, c.op, c.with_bias ? std::vector<std::string>{"x", "bias"} : std::vector<std::string>{"x"}, {"y"});
    AddOutputOfRank(g, "y", kF32, 2);
    std::vector<float> want(18);
    for (int i = 0; i < 18; ++i) {
      const double v = x.data<float>()[i] + (c.with_bias ? bias.data<float>()[i % 9] : 0.0f);
      want[i] = static_cast<float>(c.f(v));
    }
    std::vector<Tensor> got = Run(model, {x});
    ASSERT_EQ(got.size(), 1u) << c.op;
    EXPECT_TRUE(test::TensorNear(got[0], Tensor::FromVector<float>(want, Shape{2, 9}), {1e-5, 1e-5})) << c.op;
  }
}

// SkipLayerNormalization (with the sum output) at opset 17 (LayerNormalization)
// and 13 (the decomposition), SkipSimplifiedLayerNormalization, BiasAdd.
TEST_F(ContribOpsTest, SkipNormsAndBiasAdd) {
  constexpr int64_t B = 2, S = 3, H = 8;
  const Tensor x = test::RandomTensor(DataType::kFloat, Shape{B, S, H}, 51);
  const Tensor skip = test::RandomTensor(DataType::kFloat, Shape{B, S, H}, 52);
  const Tensor gamma = test::RandomTensor(DataType::kFloat, Shape{H}, 53, 0.5, 1.5);
  const Tensor beta = test::RandomTensor(DataType::kFloat, Shape{H}, 54);
  const Tensor bias = test::RandomTensor(DataType::kFloat, Shape{H}, 55);
  auto sum_at = [&](int64_t i) { return x.data<float>()[i] + skip.data<float>()[i] + bias.data<float>()[i % H]; };
  for (const std::string op : {"SkipLayerNormalization", "SkipSimplifiedLayerNormalization", "BiasAdd"}) {
    for (const int64_t opset : {13, 17}) {
      const bool rms = op == "SkipSimplifiedLayerNormalization";
      onnx::ModelProto model = MsModel(opset);
      onnx::GraphProto* g = model.mutable_graph();
      AddInput(g, "x", kF32, {B, S, H});
      AddInput(g, "skip", kF32, {B, S, H});
      for (auto [name, t] : {std::pair{"gamma", &gamma}, {"beta", &beta}, {"bias", &bias}}) AddInitializer(g, name, *t);
      std::vector<std::string> in = op == "BiasAdd" ? std::vector<std::string>{"x", "bias", "skip"}
                                    : rms           ? std::vector<std::string>{"x", "skip", "gamma", "bias"}
                                                    : std::vector<std::string>{"x", "skip", "gamma", "beta", "bias"};
      std::vector<std::string> out = {"y"};
      if (op == "SkipLayerNormalization") out = {"y", "", "", "sum"};
      onnx::NodeProto* n = MsNode(g, op, in, out);
      if (op != "BiasAdd") AttrFloat(n, "epsilon", 1e-5f);
      AddOutputOfRank(g, "y", kF32, 3);
      if (out.size() == 4) AddOutputOfRank(g, "sum", kF32, 3);
      std::vector<float> want(B * S * H), want_sum(B * S * H);
      for (int64_t r = 0; r < B * S; ++r) {
        double mean = 0, sq = 0;
        for (int64_t h = 0; h < H; ++h) mean += sum_at(r * H + h) / H;
        if (rms) mean = 0;
        for (int64_t h = 0; h < H; ++h) sq += (sum_at(r * H + h) - mean) * (sum_at(r * H + h) - mean) / H;
        for (int64_t h = 0; h < H; ++h) {
          const int64_t i = r * H + h;
          want_sum[i] = sum_at(i);
          const double normed = (sum_at(i) - mean) / std::sqrt(sq + 1e-5);
          want[i] = op == "BiasAdd"
                        ? sum_at(i)
                        : static_cast<float>(normed * gamma.data<float>()[h] + (rms ? 0.0 : beta.data<float>()[h]));
        }
      }
      std::vector<Tensor> got = Run(model, {x, skip});
      ASSERT_EQ(got.size(), out.size() == 4 ? 2u : 1u) << op << " opset " << opset;
      EXPECT_TRUE(test::TensorNear(got[0], Tensor::FromVector<float>(want, Shape{B, S, H}), {1e-4, 1e-4}))
          << op << " opset " << opset;
      if (got.size() == 2) {
        EXPECT_TRUE(test::TensorNear(got[1], Tensor::FromVector<float>(want_sum, Shape{B, S, H}), {1e-5, 1e-5}));
      }
    }
  }
}

TEST_F(ContribOpsTest, OrtLayerNormalizationBeforeOpset17) {
  onnx::ModelProto model = MakeModel(13);
  onnx::GraphProto* g = model.mutable_graph();
  AddInput(g, "x", kF32, {4, 6});
  const Tensor gamma = test::RandomTensor(DataType::kFloat, Shape{6}, 61, 0.5, 1.5);
  const Tensor beta = test::RandomTensor(DataType::kFloat, Shape{6}, 62);
  AddInitializer(g, "gamma", gamma);
  AddInitializer(g, "beta", beta);
  onnx::NodeProto* n = AddNode(g, "LayerNormalization", {"x", "gamma", "beta"}, {"y"}, "ln");
  AttrInt(n, "axis", -1);
  AttrFloat(n, "epsilon", 1e-5f);
  AddOutputOfRank(g, "y", kF32, 2);
  const Tensor x = test::RandomTensor(DataType::kFloat, Shape{4, 6}, 63);
  std::vector<float> want(24);
  for (int r = 0; r < 4; ++r) {
    double mean = 0, var = 0;
    for (int h = 0; h < 6; ++h) mean += x.data<float>()[r * 6 + h] / 6;
    for (int h = 0; h < 6; ++h) var += std::pow(x.data<float>()[r * 6 + h] - mean, 2) / 6;
    for (int h = 0; h < 6; ++h) {
      want[r * 6 + h] = static_cast<float>(
          (x.data<float>()[r * 6 + h] - mean) / std::sqrt(var + 1e-5) * gamma.data<float>()[h] + beta.data<float>()[h]);
    }
  }
  std::vector<Tensor> got = Run(model, {x});
  ASSERT_EQ(got.size(), 1u);
  EXPECT_TRUE(test::TensorNear(got[0], Tensor::FromVector<float>(want, Shape{4, 6}), {1e-4, 1e-4}));
}

// FusedConv / FusedGemm / FusedMatMul against the same model in plain ops.
TEST_F(ContribOpsTest, FusedOpsMatchTheirPlainForms) {
  const Tensor x = test::RandomTensor(DataType::kFloat, Shape{1, 3, 6, 6}, 71);
  const Tensor w = test::RandomTensor(DataType::kFloat, Shape{4, 3, 3, 3}, 72);
  const Tensor bias = test::RandomTensor(DataType::kFloat, Shape{4}, 73);
  auto conv_model = [&](bool fused) {
    onnx::ModelProto model = MsModel();
    onnx::GraphProto* g = model.mutable_graph();
    AddInput(g, "x", kF32, {1, 3, 6, 6});
    AddInitializer(g, "w", w);
    AddInitializer(g, "b", bias);
    onnx::NodeProto* n =
        fused ? MsNode(g, "FusedConv", {"x", "w", "b"}, {"y"}) : AddNode(g, "Conv", {"x", "w", "b"}, {"c"}, "conv");
    AttrInts(n, "pads", {1, 1, 1, 1});
    if (fused) {
      AttrString(n, "activation", "LeakyRelu");
      AttrFloats(n, "activation_params", {0.2f});
    } else {
      AttrFloat(AddNode(g, "LeakyRelu", {"c"}, {"y"}, "act"), "alpha", 0.2f);
    }
    AddOutputOfRank(g, "y", kF32, 4);
    return model;
  };
  std::vector<Tensor> fused = Run(conv_model(true), {x}), plain = Run(conv_model(false), {x});
  ASSERT_EQ(fused.size(), 1u);
  ASSERT_EQ(plain.size(), 1u);
  EXPECT_TRUE(test::TensorNear(fused[0], plain[0], {1e-5, 1e-5}));

  const Tensor a = test::RandomTensor(DataType::kFloat, Shape{2, 3, 5}, 74);
  const Tensor bm = test::RandomTensor(DataType::kFloat, Shape{4, 5}, 75);
  onnx::ModelProto model = MsModel();
  onnx::GraphProto* g = model.mutable_graph();
  AddInput(g, "a", kF32, {2, 3, 5});
  AddInitializer(g, "b", bm);
  onnx::NodeProto* n = MsNode(g, "FusedMatMul", {"a", "b"}, {"y"});
  AttrInt(n, "transB", 1);
  AttrFloat(n, "alpha", 0.5f);
  AddOutputOfRank(g, "y", kF32, 3);
  std::vector<float> want(2 * 3 * 4);
  for (int r = 0; r < 6; ++r) {
    for (int j = 0; j < 4; ++j) {
      double s = 0;
      for (int k = 0; k < 5; ++k) s += a.data<float>()[r * 5 + k] * bm.data<float>()[j * 5 + k];
      want[r * 4 + j] = static_cast<float>(0.5 * s);
    }
  }
  std::vector<Tensor> got = Run(model, {a});
  ASSERT_EQ(got.size(), 1u);
  EXPECT_TRUE(test::TensorNear(got[0], Tensor::FromVector<float>(want, Shape{2, 3, 4}), {1e-5, 1e-5}));
}

// Attention with a 0/1 padding mask against a reference written out here;
// with unidirectional 1 (GPT-2 without past) keys after the query are
// masked too.
TEST_F(ContribOpsTest, AttentionWithPaddingMask) {
  for (const bool causal : {false, true}) {
    CheckAttention(causal);
  }
}

void ContribOpsTest::CheckAttention(bool causal) {
  constexpr int64_t B = 2, S = 4, H = 8, NH = 2, D = H / NH;
  const Tensor x = test::RandomTensor(DataType::kFloat, Shape{B, S, H}, 81);
  const Tensor w = test::RandomTensor(DataType::kFloat, Shape{H, 3 * H}, 82);
  const Tensor bias = test::RandomTensor(DataType::kFloat, Shape{3 * H}, 83);
  const Tensor mask = Tensor::FromVector<int32_t>({1, 1, 1, 1, 1, 1, 0, 0}, Shape{B, S});
  onnx::ModelProto model = MsModel();
  onnx::GraphProto* g = model.mutable_graph();
  AddInput(g, "x", kF32, {B, S, H});
  AddInput(g, "mask", kI32, {B, S});
  AddInitializer(g, "w", w);
  AddInitializer(g, "bias", bias);
  onnx::NodeProto* att = MsNode(g, "Attention", {"x", "w", "bias", "mask"}, {"y"});
  AttrInt(att, "num_heads", NH);
  AttrInt(att, "unidirectional", causal ? 1 : 0);
  AddOutputOfRank(g, "y", kF32, 3);
  // proj[b, s, j] = x[b, s, :] . w[:, j] + bias[j]
  std::vector<double> proj(B * S * 3 * H);
  for (int64_t r = 0; r < B * S; ++r) {
    for (int64_t j = 0; j < 3 * H; ++j) {
      double s = bias.data<float>()[j];
      for (int64_t k = 0; k < H; ++k) s += x.data<float>()[r * H + k] * w.data<float>()[k * 3 * H + j];
      proj[r * 3 * H + j] = s;
    }
  }
  std::vector<float> want(B * S * H);
  for (int64_t b = 0; b < B; ++b) {
    for (int64_t h = 0; h < NH; ++h) {
      for (int64_t i = 0; i < S; ++i) {
        std::vector<double> p(S);
        double mx = -1e30, sum = 0;
        for (int64_t j = 0; j < S; ++j) {
          double s = 0;
          for (int64_t d = 0; d < D; ++d) {
            s += proj[(b * S + i) * 3 * H + h * D + d] * proj[(b * S + j) * 3 * H + H + h * D + d];
          }
          p[j] = s / std::sqrt(static_cast<double>(D)) + (mask.data<int32_t>()[b * S + j] ? 0 : -10000.0) +
                 (causal && j > i ? -10000.0 : 0);
          mx = std::max(mx, p[j]);
        }
        for (double& v : p) sum += v = std::exp(v - mx);
        for (int64_t d = 0; d < D; ++d) {
          double o = 0;
          for (int64_t j = 0; j < S; ++j) o += p[j] / sum * proj[(b * S + j) * 3 * H + 2 * H + h * D + d];
          want[(b * S + i) * H + h * D + d] = static_cast<float>(o);
        }
      }
    }
  }
  std::vector<Tensor> got = Run(model, {x, mask});
  ASSERT_EQ(got.size(), 1u);
  EXPECT_TRUE(test::TensorNear(got[0], Tensor::FromVector<float>(want, Shape{B, S, H}), {1e-4, 1e-4}));
}

// ONNX Runtime's optimized BERT front: EmbedLayerNormalization (word +
// position + segment embeddings, LayerNorm, the mask's lengths) feeding
// Attention's 1-D mask_index. The second sequence is padded after 2 tokens;
// the reference masks keys at or past each length.
TEST_F(ContribOpsTest, EmbedLayerNormalizationFeedsAttentionSequenceLengths) {
  constexpr int64_t B = 2, S = 4, H = 8, NH = 2, D = H / NH, V = 10;
  const Tensor word = test::RandomTensor(DataType::kFloat, Shape{V, H}, 101);
  const Tensor pos = test::RandomTensor(DataType::kFloat, Shape{16, H}, 102);
  const Tensor seg = test::RandomTensor(DataType::kFloat, Shape{2, H}, 103);
  const Tensor gamma = test::RandomTensor(DataType::kFloat, Shape{H}, 104, 0.5, 1.5);
  const Tensor beta = test::RandomTensor(DataType::kFloat, Shape{H}, 105);
  const Tensor w = test::RandomTensor(DataType::kFloat, Shape{H, 3 * H}, 106);
  const Tensor ids = Tensor::FromVector<int32_t>({1, 5, 9, 0, 3, 3, 0, 0}, Shape{B, S});
  const Tensor segs = Tensor::FromVector<int32_t>({0, 0, 1, 1, 0, 1, 0, 0}, Shape{B, S});
  const Tensor mask = Tensor::FromVector<int32_t>({1, 1, 1, 1, 1, 1, 0, 0}, Shape{B, S});
  onnx::ModelProto model = MsModel();
  onnx::GraphProto* g = model.mutable_graph();
  AddInput(g, "ids", kI32, {B, S});
  AddInput(g, "segs", kI32, {B, S});
  AddInput(g, "mask", kI32, {B, S});
  for (auto [name, t] :
       {std::pair{"word", &word}, {"pos", &pos}, {"seg", &seg}, {"gamma", &gamma}, {"beta", &beta}, {"w", &w}}) {
    AddInitializer(g, name, *t);
  }
  AttrFloat(MsNode(g, "EmbedLayerNormalization", {"ids", "segs", "word", "pos", "seg", "gamma", "beta", "mask"},
                   {"emb", "lengths"}),
            "epsilon", 1e-5f);
  AttrInt(MsNode(g, "Attention", {"emb", "w", "", "lengths"}, {"y"}), "num_heads", NH);
  AddOutputOfRank(g, "y", kF32, 3);
  AddOutput(g, "lengths", kI32, {B});
  // The embeddings, normalized.
  std::vector<double> emb(B * S * H);
  for (int64_t r = 0; r < B * S; ++r) {
    double mean = 0, var = 0;
    std::vector<double> v(H);
    for (int64_t h = 0; h < H; ++h) {
      v[h] = word.data<float>()[ids.data<int32_t>()[r] * H + h] + pos.data<float>()[(r % S) * H + h] +
             seg.data<float>()[segs.data<int32_t>()[r] * H + h];
      mean += v[h] / H;
    }
    for (int64_t h = 0; h < H; ++h) var += (v[h] - mean) * (v[h] - mean) / H;
    for (int64_t h = 0; h < H; ++h) {
      emb[r * H + h] = (v[h] - mean) / std::sqrt(var + 1e-5) * gamma.data<float>()[h] + beta.data<float>()[h];
    }
  }
  const int64_t lengths[B] = {4, 2};
  std::vector<double> proj(B * S * 3 * H);
  for (int64_t r = 0; r < B * S; ++r) {
    for (int64_t j = 0; j < 3 * H; ++j) {
      double s = 0;
      for (int64_t k = 0; k < H; ++k) s += emb[r * H + k] * w.data<float>()[k * 3 * H + j];
      proj[r * 3 * H + j] = s;
    }
  }
  std::vector<float> want(B * S * H);
  for (int64_t b = 0; b < B; ++b) {
    for (int64_t h = 0; h < NH; ++h) {
      for (int64_t i = 0; i < S; ++i) {
        std::vector<double> p(S);
        double mx = -1e30, sum = 0;
        for (int64_t j = 0; j < S; ++j) {
          double s = 0;
          for (int64_t d = 0; d < D; ++d) {
            s += proj[(b * S + i) * 3 * H + h * D + d] * proj[(b * S + j) * 3 * H + H + h * D + d];
          }
          p[j] = s / std::sqrt(static_cast<double>(D)) + (j < lengths[b] ? 0 : -10000.0);
          mx = std::max(mx, p[j]);
        }
        for (double& v : p) sum += v = std::exp(v - mx);
        for (int64_t d = 0; d < D; ++d) {
          double o = 0;
          for (int64_t j = 0; j < S; ++j) o += p[j] / sum * proj[(b * S + j) * 3 * H + 2 * H + h * D + d];
          want[(b * S + i) * H + h * D + d] = static_cast<float>(o);
        }
      }
    }
  }
  std::vector<Tensor> got = Run(model, {ids, segs, mask});
  ASSERT_EQ(got.size(), 2u);
  EXPECT_TRUE(test::TensorNear(got[0], Tensor::FromVector<float>(want, Shape{B, S, H}), {1e-4, 1e-4}));
  EXPECT_TRUE(test::TensorEq(got[1], Tensor::FromVector<int32_t>({4, 2}, Shape{B})));
}

// QAttention (dynamic quantization of an optimized BERT): the input
// quantized by DynamicQuantizeLinear, s8 weights per tensor, against
// Attention on the dequantized values.
TEST_F(ContribOpsTest, QAttentionMatchesAttentionOnTheDequantizedValues) {
  constexpr int64_t B = 2, S = 3, H = 8;
  const Tensor x = test::RandomTensor(DataType::kFloat, Shape{B, S, H}, 111);
  const Tensor wq = RandomInts<int8_t>(Shape{H, 3 * H}, 112);
  const Tensor bias = test::RandomTensor(DataType::kFloat, Shape{3 * H}, 113);
  const Tensor mask = Tensor::FromVector<int32_t>({1, 1, 1, 1, 0, 0}, Shape{B, S});
  auto make = [&](bool quantized) {
    onnx::ModelProto model = MsModel();
    onnx::GraphProto* g = model.mutable_graph();
    AddInput(g, "x", kF32, {B, S, H});
    AddInput(g, "mask", kI32, {B, S});
    AddInitializer(g, "wq", wq);
    AddScalar<float>(g, "ws", 0.01f);
    AddInitializer(g, "bias", bias);
    AddNode(g, "DynamicQuantizeLinear", {"x"}, {"xq", "xs", "xz"}, "dql");
    if (quantized) {
      AttrInt(MsNode(g, "QAttention", {"xq", "wq", "bias", "xs", "ws", "mask", "xz"}, {"y"}), "num_heads", 2);
    } else {
      AddNode(g, "DequantizeLinear", {"xq", "xs", "xz"}, {"xf"}, "dqx");
      AddNode(g, "DequantizeLinear", {"wq", "ws"}, {"wf"}, "dqw");
      AttrInt(MsNode(g, "Attention", {"xf", "wf", "bias", "mask"}, {"y"}), "num_heads", 2);
    }
    AddOutputOfRank(g, "y", kF32, 3);
    return model;
  };
  std::vector<Tensor> q = Run(make(true), {x, mask}), f = Run(make(false), {x, mask});
  ASSERT_EQ(q.size(), 1u);
  ASSERT_EQ(f.size(), 1u);
  EXPECT_TRUE(test::TensorNear(q[0], f[0], {1e-4, 1e-4}));
}

TEST_F(ContribOpsTest, AttentionRefusesAMaskOfUnknownOrOtherRank) {
  onnx::ModelProto model = MsModel();
  onnx::GraphProto* g = model.mutable_graph();
  AddInput(g, "x", kF32, {1, 4, 8});
  AddInput(g, "mask", kI32, {1, 1, 4, 4});
  AddNode(g, "Relu", {"mask"}, {"computed"}, "relu");
  AddInitializer(g, "w", test::RandomTensor(DataType::kFloat, Shape{8, 24}, 91));
  AttrInt(MsNode(g, "Attention", {"x", "w", "", "computed"}, {"y"}), "num_heads", 2);
  AddOutputOfRank(g, "y", kF32, 3);
  auto graph = ImportOnnxModel(model, "");
  ASSERT_FALSE(graph.ok());
  EXPECT_NE(std::string(graph.status().message()).find("mask_index of rank unknown"), std::string::npos)
      << graph.status();
  // A 4-D mask of a declared rank is refused too.
  model.mutable_graph()->mutable_node(1)->set_input(3, "mask");
  graph = ImportOnnxModel(model, "");
  ASSERT_FALSE(graph.ok());
  EXPECT_NE(std::string(graph.status().message()).find("mask_index of rank 4"), std::string::npos) << graph.status();
}

}  // namespace
}  // namespace ge::frontend
