// ONNX Runtime's transformer-optimizer and fused contrib ops (the Gelu
// family, BiasAdd, the layer norms, FusedConv / Gemm / MatMul, Attention,
// QAttention, EmbedLayerNormalization) end to end against references
// written from ONNX Runtime's definitions (ContribOperators.md).
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
void CheckAttention(ContribOpsTest& test, bool causal);

TEST_F(ContribOpsTest, AttentionWithPaddingMask) {
  for (const bool causal : {false, true}) {
    CheckAttention(*this, causal);
  }
}

// Attention (2-D mask) against the reference; `causal`: unidirectional.
void CheckAttention(ContribOpsTest& test, bool causal) {
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
  std::vector<Tensor> got = test.Run(model, {x, mask});
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
