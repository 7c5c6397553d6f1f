// Normalization, softmax-family, Dropout and matrix-product kernels of
// host_cpu against formulas evaluated here in double precision.
#include <cmath>
#include <limits>

#include "runtime/engines/host_cpu/gemm.h"
#include "tests/unit/runtime/engines/host_cpu/host_cpu_test_util.h"

namespace ge::engine::host_cpu {
namespace {

using test::TensorEq;
using test::TensorNear;

TEST(BatchNormKernel, InferenceFormula) {
  const Tensor x = test::RandomTensor(DataType::kFloat, Shape{2, 3, 2, 2}, 1);
  const Tensor scale = F32({1.0f, 2.0f, 0.5f}, {3}), bias = F32({0.0f, 1.0f, -1.0f}, {3});
  const Tensor mean = F32({0.1f, -0.2f, 0.3f}, {3}), var = F32({1.0f, 0.5f, 2.0f}, {3});
  const float eps = 1e-3f;
  const Tensor y = Host("BatchNormalization", {x, scale, bias, mean, var}, {{"epsilon", eps}});
  Tensor expected = *Tensor::Allocate(DataType::kFloat, x.shape());
  for (int64_t i = 0; i < x.NumElements(); ++i) {
    const int64_t c = (i / 4) % 3;
    expected.data<float>()[i] = static_cast<float>(
        (x.data<float>()[i] - mean.data<float>()[c]) / std::sqrt(double{var.data<float>()[c]} + eps) *
            scale.data<float>()[c] +
        bias.data<float>()[c]);
  }
  EXPECT_TRUE(TensorNear(y, expected));
  // Parameters in double with f16 data (T, T1 and T2 may differ).
  auto cast = [](const Tensor& t, DataType d) { return *test::RunOp1(Engine(), "Cast", {t}, {{"to", static_cast<int64_t>(d)}}); };
  const Tensor yh = Host("BatchNormalization",
                         {cast(x, DataType::kFloat16), cast(scale, DataType::kDouble), cast(bias, DataType::kDouble),
                          cast(mean, DataType::kFloat), cast(var, DataType::kFloat)},
                         {{"epsilon", eps}});
  EXPECT_TRUE(TensorNear(cast(yh, DataType::kFloat), expected, {2e-2, 2e-2}));
}

TEST(BatchNormKernel, TrainingModeIsUnsupported) {
  ir::OpDesc op = test::OpBuilder("BatchNormalization", "bn1").Attr("training_mode", 1).Build();
  auto kernel = Engine().kernel_factory().CreateKernel(op);
  ASSERT_FALSE(kernel.ok());
  EXPECT_EQ(kernel.status().code(), absl::StatusCode::kUnimplemented);
  EXPECT_NE(kernel.status().message().find("bn1"), absl::string_view::npos);
}

// Softmax along `axis` of x, in double.
Tensor SoftmaxRef(const Tensor& x, int64_t axis, bool log) {
  const auto dims = x.shape().span();
  int64_t outer = 1, inner = 1;
  for (int64_t d = 0; d < axis; ++d) outer *= dims[d];
  for (size_t d = axis + 1; d < dims.size(); ++d) inner *= dims[d];
  const int64_t n = dims[axis];
  Tensor y = *Tensor::Allocate(DataType::kFloat, x.shape());
  for (int64_t o = 0; o < outer; ++o) {
    for (int64_t j = 0; j < inner; ++j) {
      double sum = 0;
      for (int64_t i = 0; i < n; ++i) sum += std::exp(double{x.data<float>()[(o * n + i) * inner + j]});
      for (int64_t i = 0; i < n; ++i) {
        const int64_t k = (o * n + i) * inner + j;
        y.data<float>()[k] = static_cast<float>(log ? x.data<float>()[k] - std::log(sum)
                                                    : std::exp(double{x.data<float>()[k]}) / sum);
      }
    }
  }
  return y;
}

TEST(SoftmaxKernels, EveryAxisAgainstFormula) {
  const Tensor x = test::RandomTensor(DataType::kFloat, Shape{2, 3, 4}, 5, -3, 3);
  for (int64_t axis = -3; axis < 3; ++axis) {
    const int64_t a = axis < 0 ? axis + 3 : axis;
    EXPECT_TRUE(TensorNear(Host("Softmax", {x}, {{"axis", axis}}), SoftmaxRef(x, a, false))) << axis;
    EXPECT_TRUE(TensorNear(Host("LogSoftmax", {x}, {{"axis", axis}}), SoftmaxRef(x, a, true))) << axis;
  }
  // Default axis is -1 (Softmax-13).
  EXPECT_TRUE(TensorNear(Host("Softmax", {x}), SoftmaxRef(x, 2, false)));
  // Large logits do not overflow.
  const Tensor big = Host("Softmax", {F32({1000.0f, 1000.0f, -1000.0f}, {3})});
  EXPECT_TRUE(TensorNear(big, F32({0.5f, 0.5f, 0.0f}, {3})));
}

TEST(SoftmaxKernels, HardmaxTakesTheFirstMaximum) {
  const Tensor x = F32({1, 3, 3, 2, 5, 0, 0, 0}, {2, 4});
  EXPECT_TRUE(TensorEq(Host("Hardmax", {x}), F32({0, 1, 0, 0, 1, 0, 0, 0}, {2, 4})));
  EXPECT_TRUE(TensorEq(Host("Hardmax", {x}, {{"axis", 0}}), F32({0, 1, 1, 1, 1, 0, 0, 0}, {2, 4})));
}

TEST(SoftmaxKernels, AxisOutOfRangeNamesTheNode) {
  test::RunOptions options;
  options.output_types = {ir::ValueType::Tensor(DataType::kFloat, Shape{3})};
  const absl::Status s = RunError("Softmax", {F32({1, 2, 3}, {3})}, {{"axis", 4}}, 1, options);
  EXPECT_NE(s.message().find("test_Softmax"), absl::string_view::npos) << s;
  EXPECT_NE(s.message().find("axis 4"), absl::string_view::npos) << s;
}

TEST(LayerNormKernel, NormalizesTrailingAxesWithStatistics) {
  const Tensor x = test::RandomTensor(DataType::kFloat, Shape{2, 3, 4}, 9, -2, 2);
  const Tensor scale = test::RandomTensor(DataType::kFloat, Shape{3, 4}, 10);
  const Tensor bias = test::RandomTensor(DataType::kFloat, Shape{4}, 11);  // broadcasts to [3,4]
  auto out = test::RunOp(Engine(), "LayerNormalization", {x, scale, bias},
                         {{"axis", 1}, {"epsilon", 1e-4f}}, 3);
  ASSERT_TRUE(out.ok()) << out.status();
  Tensor y = *Tensor::Allocate(DataType::kFloat, x.shape());
  Tensor mean = *Tensor::Allocate(DataType::kFloat, Shape{2, 1, 1});
  Tensor inv = *Tensor::Allocate(DataType::kFloat, Shape{2, 1, 1});
  for (int r = 0; r < 2; ++r) {
    double m = 0, v = 0;
    for (int i = 0; i < 12; ++i) m += x.data<float>()[r * 12 + i];
    m /= 12;
    for (int i = 0; i < 12; ++i) v += std::pow(x.data<float>()[r * 12 + i] - m, 2);
    v /= 12;
    const double is = 1.0 / std::sqrt(v + 1e-4);
    for (int i = 0; i < 12; ++i) {
      y.data<float>()[r * 12 + i] = static_cast<float>(
          (x.data<float>()[r * 12 + i] - m) * is * scale.data<float>()[i] + bias.data<float>()[i % 4]);
    }
    mean.data<float>()[r] = static_cast<float>(m);
    inv.data<float>()[r] = static_cast<float>(is);
  }
  EXPECT_TRUE(TensorNear((*out)[0].tensor(), y));
  EXPECT_TRUE(TensorNear((*out)[1].tensor(), mean));
  EXPECT_TRUE(TensorNear((*out)[2].tensor(), inv));
  // One output, no bias, default axis -1.
  const Tensor y1 = Host("LayerNormalization", {x, F32({1, 1, 1, 1}, {4})});
  EXPECT_NEAR(y1.data<float>()[0] + y1.data<float>()[1] + y1.data<float>()[2] + y1.data<float>()[3], 0.0f, 1e-5);
}

TEST(DropoutKernel, InferenceForwardsAndMasksAllTrue) {
  const Tensor x = F32({1, 2, 3}, {3});
  auto out = test::RunOp(Engine(), "Dropout", {x, Tensor::Scalar<float>(0.5f)}, {}, 2);
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_TRUE(TensorEq((*out)[0].tensor(), x));
  EXPECT_EQ((*out)[0].tensor().raw_data(), x.raw_data());  // forwarded, not copied
  EXPECT_TRUE(TensorEq((*out)[1].tensor(), T1<bool>({true, true, true}, {3})));
  const absl::Status s = RunError("Dropout", {x, Tensor::Scalar<float>(0.5f), Tensor::Scalar<bool>(true)});
  EXPECT_EQ(s.code(), absl::StatusCode::kUnimplemented) << s;
  EXPECT_TRUE(TensorEq(Host("Dropout", {x, Tensor::Scalar<float>(0.0f), Tensor::Scalar<bool>(true)}), x));
}

// ---- Gemm and MatMul ----

// C[m,n] = sum_k A[m,k] B[k,n] for row-major float matrices, in double.
Tensor MatMulRef(const Tensor& a, const Tensor& b) {
  const int64_t m = a.shape().dim(0), k = a.shape().dim(1), n = b.shape().dim(1);
  Tensor c = *Tensor::Allocate(DataType::kFloat, Shape{m, n});
  for (int64_t i = 0; i < m; ++i) {
    for (int64_t j = 0; j < n; ++j) {
      double s = 0;
      for (int64_t p = 0; p < k; ++p) s += double{a.data<float>()[i * k + p]} * b.data<float>()[p * n + j];
      c.data<float>()[i * n + j] = static_cast<float>(s);
    }
  }
  return c;
}

Tensor Transposed(const Tensor& t) { return Host("Transpose", {t}); }

TEST(GemmKernel, TransposesAlphaBetaAndBroadcastC) {
  const Tensor a = test::RandomTensor(DataType::kFloat, Shape{5, 7}, 1);
  const Tensor b = test::RandomTensor(DataType::kFloat, Shape{7, 3}, 2);
  const Tensor c = F32({1, 2, 3}, {3});
  Tensor expected = MatMulRef(a, b);
  for (int64_t i = 0; i < 15; ++i) {
    expected.data<float>()[i] = 2.0f * expected.data<float>()[i] + 0.5f * c.data<float>()[i % 3];
  }
  const ir::AttrMap attrs{{"alpha", 2.0f}, {"beta", 0.5f}};
  EXPECT_TRUE(TensorNear(Host("Gemm", {a, b, c}, attrs), expected));
  ir::AttrMap t = attrs;
  t["transA"] = 1;
  t["transB"] = 1;
  EXPECT_TRUE(TensorNear(Host("Gemm", {Transposed(a), Transposed(b), c}, t), expected));
  EXPECT_TRUE(TensorNear(Host("Gemm", {a, b}), MatMulRef(a, b)));
  // beta = 0 ignores C, even NaN.
  EXPECT_TRUE(TensorNear(Host("Gemm", {a, b, F32({NAN}, {1})}, {{"beta", 0.0f}}), MatMulRef(a, b)));
}

TEST(GemmKernel, IntegerAndHalf) {
  const Tensor a = T1<int32_t>({1, 2, 3, 4}, {2, 2}), b = T1<int32_t>({5, 6, 7, 8}, {2, 2});
  EXPECT_TRUE(TensorEq(Host("Gemm", {a, b, T1<int32_t>({1}, {1})}, {{"alpha", 2.0f}}),
                       T1<int32_t>({39, 45, 87, 101}, {2, 2})));
  const Tensor ah = test::MakeTensor(DataType::kFloat16, {1, 2, 3, 4}, {2, 2});
  const Tensor bh = test::MakeTensor(DataType::kFloat16, {5, 6, 7, 8}, {2, 2});
  EXPECT_TRUE(TensorEq(Host("Gemm", {ah, bh}), test::MakeTensor(DataType::kFloat16, {19, 22, 43, 50}, {2, 2})));
}

TEST(MatMulKernel, BatchedBroadcastingAndOneDimensional) {
  const Tensor a = test::RandomTensor(DataType::kFloat, Shape{2, 1, 4, 5}, 3);
  const Tensor b = test::RandomTensor(DataType::kFloat, Shape{3, 5, 6}, 4);
  const Tensor y = Host("MatMul", {a, b});
  ASSERT_EQ(y.shape(), (Shape{2, 3, 4, 6}));
  for (int64_t i = 0; i < 2; ++i) {
    for (int64_t j = 0; j < 3; ++j) {
      const Tensor ai = Tensor(DataType::kFloat, Shape{4, 5}, a.buffer(), a.byte_offset() + i * 20 * 4);
      const Tensor bj = Tensor(DataType::kFloat, Shape{5, 6}, b.buffer(), b.byte_offset() + j * 30 * 4);
      const Tensor yij = Tensor(DataType::kFloat, Shape{4, 6}, y.buffer(), y.byte_offset() + (i * 3 + j) * 24 * 4);
      EXPECT_TRUE(TensorNear(yij, MatMulRef(ai, bj))) << i << "," << j;
    }
  }
  // [K] x [K, N] -> [N]; [M, K] x [K] -> [M]; [K] x [K] -> scalar.
  const Tensor v = F32({1, 2}, {2}), m = F32({1, 2, 3, 4}, {2, 2});
  EXPECT_TRUE(TensorEq(Host("MatMul", {v, m}), F32({7, 10}, {2})));
  EXPECT_TRUE(TensorEq(Host("MatMul", {m, v}), F32({5, 11}, {2})));
  EXPECT_TRUE(TensorEq(Host("MatMul", {v, v}), Tensor::Scalar<float>(5.0f)));
}

TEST(MatMulKernel, FoldedBatchesManySmallAndIntegers) {
  // A [4,3,8] x B [8,5]: batches fold into one [12,8] product.
  const Tensor a = test::RandomTensor(DataType::kFloat, Shape{4, 3, 8}, 5);
  const Tensor b = test::RandomTensor(DataType::kFloat, Shape{8, 5}, 6);
  EXPECT_TRUE(TensorNear(Host("MatMul", {a, b}).Reshaped(Shape{12, 5}), MatMulRef(a.Reshaped(Shape{12, 8}), b)));
  // Many small batches run in parallel with serial products.
  const Tensor c = test::RandomTensor(DataType::kFloat, Shape{64, 4, 4}, 7);
  test::RunOptions parallel;
  parallel.thread_pool = test::TestThreadPool();
  EXPECT_TRUE(TensorEq(Host("MatMul", {c, c}, {}, parallel), Host("MatMul", {c, c})));
  EXPECT_TRUE(TensorEq(Host("MatMul", {T1<int64_t>({1, 2, 3, 4}, {2, 2}), T1<int64_t>({1, 0, 0, 1}, {2, 2})}),
                       T1<int64_t>({1, 2, 3, 4}, {2, 2})));
  // Zero-sized K gives zeros; zero-sized M gives an empty result.
  EXPECT_TRUE(TensorEq(Host("MatMul", {*Tensor::Allocate(DataType::kFloat, Shape{2, 0}),
                                       *Tensor::Allocate(DataType::kFloat, Shape{0, 3})}),
                       *Tensor::Allocate(DataType::kFloat, Shape{2, 3})));
  EXPECT_EQ(Host("MatMul", {*Tensor::Allocate(DataType::kFloat, Shape{0, 4}), b.Reshaped(Shape{4, 10})}).shape(),
            (Shape{0, 10}));
}

// The blocked GEMM directly, over sizes around its tile edges, every
// transpose combination, beta values and both precisions.
template <typename T>
void CheckGemm(int64_t m, int64_t n, int64_t k, bool ta, bool tb, T alpha, T beta, int threads) {
  std::vector<T> a(m * k), b(k * n), c(m * n), ref(m * n);
  uint64_t state = static_cast<uint64_t>(m * 131 + n * 17 + k);
  auto rnd = [&state]() {
    state = state * 6364136223846793005ULL + 1442695040888963407ULL;
    return static_cast<T>(static_cast<double>(state >> 40) / (1 << 24) - 0.5);
  };
  for (T& v : a) v = rnd();
  for (T& v : b) v = rnd();
  for (size_t i = 0; i < c.size(); ++i) c[i] = ref[i] = rnd();
  for (int64_t i = 0; i < m; ++i) {
    for (int64_t j = 0; j < n; ++j) {
      double s = 0;
      for (int64_t p = 0; p < k; ++p) {
        s += double{ta ? a[p * m + i] : a[i * k + p]} * (tb ? b[j * k + p] : b[p * n + j]);
      }
      ref[i * n + j] = static_cast<T>(alpha * s + (beta == T(0) ? 0.0 : beta * ref[i * n + j]));
    }
  }
  Gemm<T>(ta, tb, m, n, k, alpha, a.data(), ta ? m : k, b.data(), tb ? k : n, beta, c.data(), n, threads);
  for (int64_t i = 0; i < m * n; ++i) {
    ASSERT_NEAR(c[i], ref[i], 1e-4 * (1 + std::sqrt(static_cast<double>(k))))
        << "m " << m << " n " << n << " k " << k << " ta " << ta << " tb " << tb << " at " << i;
  }
}

TEST(BlockedGemm, MatchesReferenceAcrossTileEdges) {
  for (auto [m, n, k] : std::vector<std::tuple<int64_t, int64_t, int64_t>>{
           {1, 1, 1}, {3, 5, 7}, {8, 16, 256}, {9, 17, 257}, {97, 33, 300}, {20, 800, 40}, {130, 3, 520}}) {
    for (bool ta : {false, true}) {
      for (bool tb : {false, true}) {
        CheckGemm<float>(m, n, k, ta, tb, 1.0f, 0.0f, 1);
        CheckGemm<double>(m, n, k, ta, tb, 0.5, 2.0, 3);
      }
    }
  }
  CheckGemm<float>(200, 300, 100, false, false, 1.5f, 1.0f, 3);
  CheckGemm<float>(5, 5, 0, false, false, 1.0f, 0.5f, 1);  // k = 0: C = beta * C
}

}  // namespace
}  // namespace ge::engine::host_cpu

namespace ge::engine::host_cpu {
namespace {

// A one-unit RNN with weights 1 is h_t = tanh(x_t + h_{t-1}): checks the
// recurrence, sequence_lens (rows past their length are zero, Y_h is the
// state after the row's last step) and the reverse direction.
TEST(RecurrentKernels, RnnRecurrenceLengthsAndDirections) {
  const Tensor x = F32({0.5f, -1.0f, 0.25f, 2.0f, 1.0f, 0.0f}, {3, 2, 1});  // [seq 3, batch 2, input 1]
  const Tensor w = F32({1.0f}, {1, 1, 1}), r = F32({1.0f}, {1, 1, 1});
  const Tensor lens = T1<int32_t>({3, 1}, Shape{2});
  for (const std::string direction : {"forward", "reverse"}) {
    auto out = test::RunOp(Engine(), "RNN", {x, w, r, Value(), lens}, {{"hidden_size", 1}, {"direction", direction}},
                           2);
    ASSERT_TRUE(out.ok()) << out.status();
    const float* y = (*out)[0].tensor().data<float>();
    const float* yh = (*out)[1].tensor().data<float>();
    // Batch row 0 runs 3 steps over 0.5, 0.25, 1.0 (reversed for "reverse");
    // row 1 runs one step over -1.0.
    const std::vector<double> xs = direction == "forward" ? std::vector<double>{0.5, 0.25, 1.0}
                                                          : std::vector<double>{1.0, 0.25, 0.5};
    double h = 0;
    std::vector<double> states;
    for (double v : xs) states.push_back(h = std::tanh(v + h));
    for (int t = 0; t < 3; ++t) {
      const int step = direction == "forward" ? t : 2 - t;  // Y is indexed by time
      EXPECT_NEAR(y[t * 2], states[step], 1e-6) << direction << " t=" << t;
    }
    EXPECT_NEAR(yh[0], states.back(), 1e-6);
    EXPECT_NEAR(y[1], std::tanh(-1.0), 1e-6);
    EXPECT_EQ(y[3], 0.0f);  // row 1 past its length
    EXPECT_EQ(y[5], 0.0f);
    EXPECT_NEAR(yh[1], std::tanh(-1.0), 1e-6);
  }
}

TEST(RecurrentKernels, BadLengthsAndActivationsAreErrors) {
  const Tensor x = F32({1, 2, 3}, {3, 1, 1});
  const Tensor w = F32({1}, {1, 1, 1}), r = F32({1}, {1, 1, 1});
  absl::Status s = RunError("RNN", {x, w, r, Value(), T1<int32_t>({4}, Shape{1})}, {{"hidden_size", 1}}, 2);
  EXPECT_NE(s.message().find("sequence_lens[0] = 4"), absl::string_view::npos) << s;
  s = RunError("RNN", {x, w, r}, {{"activations", std::vector<std::string>{"Cube"}}}, 2);
  EXPECT_NE(s.message().find("unknown activation 'cube'"), absl::string_view::npos) << s;
  s = RunError("GRU", {x, F32({1, 1, 1}, {1, 3, 1}), F32({1, 1, 1}, {1, 3, 1})},
               {{"activations", std::vector<std::string>{"Sigmoid"}}}, 2);
  EXPECT_NE(s.message().find("expected 2 activations"), absl::string_view::npos) << s;
}

}  // namespace
}  // namespace ge::engine::host_cpu
