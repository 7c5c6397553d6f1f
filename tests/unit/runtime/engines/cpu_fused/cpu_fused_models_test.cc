// End to end: models compiled with cpu_fused give the outputs they give
// without it (ge.exec.exclude_engines=cpu_fused, so the regions stay on
// cpu_dense and cpu_vector), and the fused ops are really there.
//
// The models: torch's TransformerEncoder test model (nn.MultiheadAttention
// export: pre-scaled Q, post-norm residual adds; scripts/make_test_models.py)
// and a BERT-style encoder written here in the form Hugging Face's export
// takes (scores divided then masked by an additive padding mask input, K^T by
// a swap of the last two axes), static shapes, two layers.
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <random>

#include "base/io/npy.h"
#include "base/ir/text_format.h"
#include "compiler/frontend/onnx_importer.h"
#include "gtest/gtest.h"
#include "session/session.h"
#include "tests/testing/engines_test.h"
#include "tests/testing/kernel_test_util.h"

namespace ge::engine::cpu_fused {
namespace {

namespace fs = std::filesystem;

// A Const line of `shape` with seeded values in [-scale, scale].
std::string ConstLine(const std::string& name, const std::vector<int64_t>& shape, std::mt19937& rng, float scale,
                      float offset = 0.0f) {
  std::uniform_real_distribution<float> dist(-scale, scale);
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  const std::string type = StrCat("f32", Shape(shape).ToString());
  std::string values;
  for (int64_t i = 0; i < n; ++i) StrAppend(&values, i ? ", " : "", offset + dist(rng));
  return StrCat("  ", name, " = Const() {value = tensor<", type, ">[", values, "]} -> (", type, ")\n");
}

std::string Type(std::vector<int64_t> dims) { return StrCat("f32", Shape(dims).ToString()); }

// Hugging Face's BertLayer as its ONNX export spells it, `layers` times:
// self-attention with an additive mask, output projection, residual +
// LayerNorm, a ReLU FFN, residual + LayerNorm.
std::string BertStyleEncoder(int64_t b, int64_t s, int64_t h, int64_t heads, int layers, uint32_t seed) {
  std::mt19937 rng(seed);
  const int64_t dh = h / heads;
  const float w = 1.0f / std::sqrt(static_cast<float>(h));
  std::string g = "graph bert {\n";
  StrAppend(&g, "  x = Data() {index = 0} -> (", Type({b, s, h}), ")\n");
  StrAppend(&g, "  mask = Data() {index = 1} -> (", Type({b, 1, 1, s}), ")\n");
  StrAppend(&g, "  split = Const() {value = tensor<i64[4]>[", b, ", ", s, ", ", heads, ", ", dh, "]} -> (i64[4])\n");
  StrAppend(&g, "  merge = Const() {value = tensor<i64[3]>[", b, ", ", s, ", ", h, "]} -> (i64[3])\n");
  StrAppend(&g, "  sqrt_dh = Const() {value = tensor<f32[]>[", std::sqrt(static_cast<float>(dh)), "]} -> (f32[])\n");
  std::string in = "x";
  const std::string bsh = Type({b, s, h}), bhsd = Type({b, heads, s, dh}), bshd = Type({b, s, heads, dh});
  for (int l = 0; l < layers; ++l) {
    const std::string p = StrCat("l", l, "_");
    for (const char* m : {"q", "k", "v", "o"}) {
      g += ConstLine(StrCat(p, "w", m), {h, h}, rng, w);
      g += ConstLine(StrCat(p, "b", m), {h}, rng, 0.1f);
    }
    g += ConstLine(p + "w1", {h, 2 * h}, rng, w);
    g += ConstLine(p + "b1", {2 * h}, rng, 0.1f);
    g += ConstLine(p + "w2", {2 * h, h}, rng, w);
    g += ConstLine(p + "b2", {h}, rng, 0.1f);
    for (const char* n : {"ln1", "ln2"}) {
      g += ConstLine(StrCat(p, n, "_g"), {h}, rng, 0.2f, 1.0f);
      g += ConstLine(StrCat(p, n, "_b"), {h}, rng, 0.1f);
    }
    for (const char* m : {"q", "k", "v"}) {
      StrAppend(&g, "  ", p, m, "_mm = MatMul(", in, ", ", p, "w", m, ") -> (", bsh, ")\n");
      StrAppend(&g, "  ", p, m, "_add = Add(", p, m, "_mm, ", p, "b", m, ") -> (", bsh, ")\n");
      StrAppend(&g, "  ", p, m, "_split = Reshape(", p, m, "_add, split) -> (", bshd, ")\n");
      StrAppend(&g, "  ", p, m, "_heads = Transpose(", p, m, "_split) {perm = [0, 2, 1, 3]} -> (", bhsd, ")\n");
    }
    StrAppend(&g, "  ", p, "kt = Transpose(", p, "k_heads) {perm = [0, 1, 3, 2]} -> (", Type({b, heads, dh, s}), ")\n");
    const std::string bhss = Type({b, heads, s, s});
    StrAppend(&g, "  ", p, "scores = MatMul(", p, "q_heads, ", p, "kt) -> (", bhss, ")\n");
    StrAppend(&g, "  ", p, "scaled = Div(", p, "scores, sqrt_dh) -> (", bhss, ")\n");
    StrAppend(&g, "  ", p, "masked = Add(", p, "scaled, mask) -> (", bhss, ")\n");
    StrAppend(&g, "  ", p, "probs = Softmax(", p, "masked) {axis = -1} -> (", bhss, ")\n");
    StrAppend(&g, "  ", p, "ctx = MatMul(", p, "probs, ", p, "v_heads) -> (", bhsd, ")\n");
    StrAppend(&g, "  ", p, "ctx_t = Transpose(", p, "ctx) {perm = [0, 2, 1, 3]} -> (", bshd, ")\n");
    StrAppend(&g, "  ", p, "ctx_m = Reshape(", p, "ctx_t, merge) -> (", bsh, ")\n");
    StrAppend(&g, "  ", p, "o_mm = MatMul(", p, "ctx_m, ", p, "wo) -> (", bsh, ")\n");
    StrAppend(&g, "  ", p, "o_add = Add(", p, "o_mm, ", p, "bo) -> (", bsh, ")\n");
    StrAppend(&g, "  ", p, "res1 = Add(", p, "o_add, ", in, ") -> (", bsh, ")\n");
    StrAppend(&g, "  ", p, "ln1 = LayerNormalization(", p, "res1, ", p, "ln1_g, ", p, "ln1_b) {axis = -1, epsilon = 1e-12} -> (", bsh, ")\n");
    const std::string bsf = Type({b, s, 2 * h});
    StrAppend(&g, "  ", p, "f1_mm = MatMul(", p, "ln1, ", p, "w1) -> (", bsf, ")\n");
    StrAppend(&g, "  ", p, "f1_add = Add(", p, "f1_mm, ", p, "b1) -> (", bsf, ")\n");
    StrAppend(&g, "  ", p, "f1_act = Relu(", p, "f1_add) -> (", bsf, ")\n");
    StrAppend(&g, "  ", p, "f2_mm = MatMul(", p, "f1_act, ", p, "w2) -> (", bsh, ")\n");
    StrAppend(&g, "  ", p, "f2_add = Add(", p, "f2_mm, ", p, "b2) -> (", bsh, ")\n");
    StrAppend(&g, "  ", p, "res2 = Add(", p, "f2_add, ", p, "ln1) -> (", bsh, ")\n");
    StrAppend(&g, "  ", p, "ln2 = LayerNormalization(", p, "res2, ", p, "ln2_g, ", p, "ln2_b) {axis = -1, epsilon = 1e-12} -> (", bsh, ")\n");
    in = p + "ln2";
  }
  StrAppend(&g, "  out = NetOutput(", in, ")\n}\n");
  return g;
}

class CpuFusedModelsTest : public ge::testing::EnginesTest {
 protected:
  // Compiles and runs `graph` with and without cpu_fused; returns both
  // outputs and counts the nodes of each type in the fused compilation.
  void RunBoth(const std::function<std::unique_ptr<ir::Graph>()>& make, const std::vector<Value>& inputs,
               std::vector<Tensor>* fused, std::vector<Tensor>* unfused, std::map<std::string, int>* fused_types,
               std::map<std::string, int>* unfused_types) {
    int variant = 0;
    for (auto [outputs, types] : {std::pair{fused, fused_types}, std::pair{unfused, unfused_types}}) {
      OptionMap options;
      if (variant++ == 1) options["ge.exec.exclude_engines"] = "cpu_fused";
      session::Session session(*engines_, options, &pool_);
      ASSERT_TRUE(session.AddGraph(1, make()).ok());
      auto result = session.RunGraph(1, inputs);
      ASSERT_TRUE(result.ok()) << result.status();
      for (const Value& v : *result) outputs->push_back(v.tensor());
      auto compiled = session.GetCompiledGraph(1);
      ASSERT_TRUE(compiled.ok()) << compiled.status();
      (*compiled)->graph->ForEachNode([&](const ir::Node* n) { ++(*types)[n->type()]; });
    }
  }

  ThreadPool pool_{1, "cpu-fused-models-test"};
};

TEST_F(CpuFusedModelsTest, BertStyleEncoderMatchesWithoutCpuFused) {
  constexpr int64_t kBatch = 2, kSeq = 16, kHidden = 64, kHeads = 4;
  const std::string text = BertStyleEncoder(kBatch, kSeq, kHidden, kHeads, /*layers=*/2, /*seed=*/7);
  auto make = [&] {
    auto g = ir::ParseGraph(text);
    EXPECT_TRUE(g.ok()) << g.status();
    return g.ok() ? std::move(*g) : std::make_unique<ir::Graph>("empty");
  };
  const Tensor x = test::RandomTensor(DataType::kFloat, Shape{kBatch, kSeq, kHidden}, 11);
  // The second sequence is padded after 10 tokens.
  std::vector<float> mask(kBatch * kSeq, 0.0f);
  for (int64_t j = 10; j < kSeq; ++j) mask[kSeq + j] = -10000.0f;
  const Tensor m = Tensor::FromVector<float>(mask, Shape{kBatch, 1, 1, kSeq});
  std::vector<Tensor> fused, unfused;
  std::map<std::string, int> fused_types, unfused_types;
  RunBoth(make, {x, m}, &fused, &unfused, &fused_types, &unfused_types);
  if (HasFatalFailure()) return;
  EXPECT_EQ(fused_types["_FusedAttention"], 2);
  EXPECT_EQ(fused_types["_FusedAddLayerNorm"], 4);
  EXPECT_EQ(fused_types["Softmax"], 0);
  EXPECT_EQ(unfused_types["_FusedAttention"], 0);
  EXPECT_EQ(unfused_types["_FusedAddLayerNorm"], 0);
  EXPECT_EQ(unfused_types["Softmax"], 2);
  ASSERT_EQ(fused.size(), 1u);
  ASSERT_EQ(unfused.size(), 1u);
  EXPECT_TRUE(test::TensorNear(fused[0], unfused[0], {1e-4, 1e-4}));
}

TEST_F(CpuFusedModelsTest, TorchTransformerMatchesWithoutCpuFused) {
  const char* binary_dir = std::getenv("GED_BINARY_DIR");
  ASSERT_NE(binary_dir, nullptr) << "run under ctest (GED_BINARY_DIR)";
  const fs::path dir = fs::path(binary_dir) / "models" / "transformer_op17";
  ASSERT_TRUE(fs::exists(dir / "model.onnx")) << dir << " missing: run scripts/make_test_models.py";
  auto src = io::ReadNpyFile((dir / "inputs" / "src.npy").string());
  ASSERT_TRUE(src.ok()) << src.status();
  auto expected = io::ReadNpyFile((dir / "expected" / "output.npy").string());
  ASSERT_TRUE(expected.ok()) << expected.status();
  auto make = [&] {
    auto g = frontend::ImportOnnxFile((dir / "model.onnx").string());
    EXPECT_TRUE(g.ok()) << g.status();
    return g.ok() ? std::move(*g) : std::make_unique<ir::Graph>("empty");
  };
  std::vector<Tensor> fused, unfused;
  std::map<std::string, int> fused_types, unfused_types;
  RunBoth(make, {*src}, &fused, &unfused, &fused_types, &unfused_types);
  if (HasFatalFailure()) return;
  EXPECT_EQ(fused_types["_FusedAttention"], 2);   // one per layer
  EXPECT_EQ(fused_types["_FusedAddLayerNorm"], 4);  // both norms of each layer
  EXPECT_EQ(unfused_types["_FusedAttention"] + unfused_types["_FusedAddLayerNorm"], 0);
  ASSERT_EQ(fused.size(), 1u);
  ASSERT_EQ(unfused.size(), 1u);
  EXPECT_TRUE(test::TensorNear(fused[0], unfused[0], {1e-5, 1e-4}));
  // And both match torch (the model's tolerance, scripts/make_test_models.py).
  EXPECT_TRUE(test::TensorNear(fused[0], *expected, {1e-3, 0}));
}

}  // namespace
}  // namespace ge::engine::cpu_fused
