// ONNX Runtime's com.microsoft contrib ops (compiler/frontend/onnx_contrib_ops.h):
// what the importer makes of them, its errors, and the quantized ops' values
// end to end (import, compile, run on the built-in engines) against
// references written here from ONNX Runtime's definitions
// (ContribOperators.md); the transformer ops: onnx_contrib_transformer_test.cc.
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
#include <string>
#include <vector>

#include "tests/unit/compiler/frontend/onnx_contrib_ops_test_util.h"

namespace ge::frontend {
namespace {

using namespace ::ge::frontend::contrib_test;  // NOLINT
using namespace ::ge::onnx_builder;            // NOLINT

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

}  // namespace
}  // namespace ge::frontend
