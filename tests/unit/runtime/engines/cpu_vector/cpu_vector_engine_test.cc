// The cpu_vector engine: plugin attributes, ISA selection, what it refuses,
// its KernelBuilder, the threaded paths and the f32 exp's accuracy.
#include "runtime/engines/cpu_vector/cpu_vector_engine.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <limits>

#include "runtime/engines/host_cpu/host_cpu_engine.h"
#include "runtime/engines/plugin_loader.h"
#include "tests/testing/kernel_test_util.h"
#include "tests/unit/runtime/engines/cpu_vector/vector_test_engines.h"

namespace ge::engine::cpu_vector {
namespace {

std::string PluginPath() {
  const char* dir = std::getenv("GED_BINARY_DIR");
  return std::string(dir != nullptr ? dir : ".") + "/lib/ged/engines/libge_engine_cpu_vector.so";
}

ir::OpDesc Typed(const std::string& type, const std::vector<Value>& inputs, const ir::AttrMap& attrs = {}) {
  test::OpBuilder b(type, "n");
  b.Inputs(inputs).Outputs(1);
  for (const auto& [k, v] : attrs) b.Attr(k, v);
  ir::OpDesc op = b.Build();
  auto types = test::InferOutputTypes(op, inputs);
  if (types.ok()) op.mutable_output(0).type = (*types)[0];
  return op;
}

TEST(CpuVectorEngineTest, PluginLoadsWithItsAttributes) {
  auto loaded = LoadEnginePlugin(PluginPath());
  ASSERT_TRUE(loaded.ok()) << loaded.status();
  const EngineAttributes& a = (*loaded)->attributes();
  EXPECT_EQ(a.name, "cpu_vector");
  EXPECT_EQ(a.compute_cost, 2);
  EXPECT_TRUE(a.atomic);
  EXPECT_TRUE((*loaded)->engine().Initialize({}).ok());
  EXPECT_FALSE((*loaded)->engine().Initialize({{"ge.cpu_vector.isa", "sse"}}).ok());
}

TEST(CpuVectorEngineTest, SelectsAvx512WhenPresentUnlessForced) {
  ASSERT_TRUE(CpuHasAvx2());
  CpuVectorEngine engine;
  ASSERT_TRUE(engine.Initialize({}).ok());
  EXPECT_STREQ(Kernels().name, CpuHasAvx512() ? "avx512" : "avx2");
  ASSERT_TRUE(engine.Initialize({{"ge.cpu_vector.isa", "avx2"}}).ok());
  EXPECT_STREQ(Kernels().name, "avx2");
  setenv("GED_CPU_VECTOR_ISA", "avx2", 1);
  ASSERT_TRUE(engine.Initialize({}).ok());
  EXPECT_STREQ(Kernels().name, "avx2");
  unsetenv("GED_CPU_VECTOR_ISA");
  ASSERT_TRUE(engine.Initialize({}).ok());
  EXPECT_EQ(ForceIsa(Isa::kAvx512).ok(), CpuHasAvx512());
  ASSERT_TRUE(SelectIsa(false).ok());
}

TEST(CpuVectorEngineTest, RejectsWhatItDoesNotRunWithAReason) {
  const auto& store = Vector().vector_info_store();
  auto reason = [&](const ir::OpDesc& op) { return std::string(store.CheckSupportedOp(op).message()); };
  const Tensor s = Tensor::FromVector<std::string>({"a"}, Shape{1});
  EXPECT_NE(reason(Typed("Transpose", {s})).find("dtype string"), std::string::npos);
  const Tensor bf = test::RandomTensor(DataType::kBFloat16, Shape{2}, 1);
  EXPECT_NE(reason(Typed("Relu", {bf})).find("dtype bf16"), std::string::npos);
  const Tensor u8 = test::RandomTensor(DataType::kUint8, Shape{2}, 1, 0, 9);
  EXPECT_NE(reason(Typed("Neg", {u8})).find("dtype u8"), std::string::npos);
  const Tensor f = test::RandomTensor(DataType::kFloat, Shape{2}, 1);
  EXPECT_NE(reason(Typed("Mod", {f, f})).find("fmod=0"), std::string::npos);
  EXPECT_NE(reason(Typed("Conv", {f, f})).find("no kernel for op type Conv"), std::string::npos);
  // Views stay on ge_local, which forwards storage.
  for (const char* view : {"Reshape", "Identity", "Squeeze", "Unsqueeze", "Flatten"}) {
    EXPECT_FALSE(store.CheckSupportedOp(Typed(view, {f})).ok()) << view;
  }
}

TEST(CpuVectorEngineTest, KernelBuilderBindsTypedTasksAndRefusesOthers) {
  const Tensor a = test::RandomTensor(DataType::kFloat, Shape{1}, 1);
  ir::OpDesc op = Typed("Add", {a, a});
  PrepareContext ctx;
  ctx.op = &op;
  ctx.input_types = {op.input(0).type, op.input(1).type};
  ctx.output_types = {op.output(0).type};
  const KernelBuilder& builder = Vector().kernel_builder();
  auto task = builder.BuildTask(Vector().kernel_factory(), "cpu_vector", ctx);
  ASSERT_TRUE(task.ok()) << task.status();
  EXPECT_EQ(task->param_version, CpuVectorKernelBuilder::kParamVersion);
  EXPECT_EQ(task->params, "f32[1],f32[1]->f32[1]");
  EXPECT_TRUE(builder.LoadKernel(Vector().kernel_factory(), *task, ctx).ok());
  engine::TaskDef old = *task;
  old.param_version = 0;
  EXPECT_TRUE(absl::IsFailedPrecondition(builder.LoadKernel(Vector().kernel_factory(), old, ctx).status()));
  // A blob for other types: the .gem is corrupt or hostile.
  ctx.output_types = {ir::ValueType::Tensor(DataType::kFloat, Shape{2})};
  EXPECT_TRUE(absl::IsInvalidArgument(builder.LoadKernel(Vector().kernel_factory(), *task, ctx).status()));
}

// Tensors above the grain size run on the pool; results match host_cpu.
TEST(CpuVectorEngineTest, LargeTensorsSplitAcrossThreads) {
  test::RunOptions options;
  options.thread_pool = test::TestThreadPool();
  const Tensor a = test::RandomTensor(DataType::kFloat, Shape{64, 4096}, 1);
  const Tensor b = test::RandomTensor(DataType::kFloat, Shape{1, 4096}, 2);
  for (const char* type : {"Add", "Mul", "Max"}) {
    EXPECT_TRUE(test::MatchesReference(Vector(), Host(), Typed(type, {a, b}), {a, b}, std::nullopt, options)) << type;
  }
  EXPECT_TRUE(test::MatchesReference(Vector(), Host(), Typed("Tanh", {a}), {a}, std::nullopt, options));
  const ir::AttrMap axes0 = {{"axes", ir::AttrValue(std::vector<int64_t>{1})}};
  EXPECT_TRUE(test::MatchesReference(Vector(), Host(), Typed("ReduceMean", {a}, axes0), {a}, std::nullopt, options));
  EXPECT_TRUE(test::MatchesReference(Vector(), Host(), Typed("Transpose", {a}), {a}, std::nullopt, options));
}

// An execute context whose workspace is exactly what Prepare asked for, followed by
// guard bytes that must stay untouched; everything else is the test context's.
class GuardedWorkspaceContext final : public ExecuteContext {
 public:
  GuardedWorkspaceContext(std::vector<Value> inputs, std::vector<ir::ValueType> types, size_t bytes)
      : inner_(std::move(inputs), std::move(types), nullptr, 0), bytes_(bytes), buffer_(bytes + 4096, 0x5a) {}
  int num_inputs() const override { return inner_.num_inputs(); }
  int num_outputs() const override { return inner_.num_outputs(); }
  const Value& input_value(int i) const override { return inner_.input_value(i); }
  const ir::ValueType& output_type(int i) const override { return inner_.output_type(i); }
  using ExecuteContext::Output;
  absl::StatusOr<Tensor> Output(int i, const Shape& shape) override { return inner_.Output(i, shape); }
  absl::Status SetOutputValue(int i, Value value) override { return inner_.SetOutputValue(i, std::move(value)); }
  void* workspace() override { return buffer_.data(); }
  ThreadPool* thread_pool() override { return inner_.thread_pool(); }
  int num_threads() const override { return inner_.num_threads(); }
  bool GuardIntact() const {
    return std::all_of(buffer_.begin() + static_cast<std::ptrdiff_t>(bytes_), buffer_.end(),
                       [](unsigned char c) { return c == 0x5a; });
  }
  const std::vector<Value>& outputs() const { return inner_.outputs(); }

 private:
  test::TestExecuteContext inner_;
  size_t bytes_;
  std::vector<unsigned char> buffer_;
};

// A reduction prepared for one shape (or for an unknown one, as in a Loop body) and
// run on a larger one keeps to the workspace Prepare asked for: the larger
// accumulator goes to a buffer of its own (EmbeddingBag's Loop crashed here).
TEST(CpuVectorEngineTest, ReductionOnALargerShapeThanPreparedStaysInItsWorkspace) {
  const Tensor x = test::RandomTensor(DataType::kFloat, Shape{20, 512}, 3);
  const Tensor axes = test::MakeTensor(DataType::kInt64, {0}, Shape{1});
  for (const char* type : {"ReduceSum", "ReduceMean", "ReduceMax", "ReduceLogSumExp"}) {
    for (const ir::ValueType& prepared : {ir::ValueType::Tensor(DataType::kFloat, Shape{4, 2}),
                                          ir::ValueType::Tensor(DataType::kFloat, Shape{-1, 512})}) {
      // ReduceSum takes its axes as an input (opset 13), the others as an attribute.
      const bool axes_input = std::string(type) == "ReduceSum";
      ir::AttrMap attrs = {{"keepdims", ir::AttrValue(int64_t{0})}};
      if (!axes_input) attrs["axes"] = ir::AttrValue(std::vector<int64_t>{0});
      const std::vector<Value> inputs = axes_input ? std::vector<Value>{x, axes} : std::vector<Value>{x};
      ir::OpDesc op = Typed(type, inputs, attrs);
      auto kernel = Vector().kernel_factory().CreateKernel(op);
      ASSERT_TRUE(kernel.ok()) << kernel.status();
      PrepareContext prepare;
      prepare.op = &op;
      prepare.input_types = {prepared};
      prepare.const_inputs = {nullptr};
      if (axes_input) {
        prepare.input_types.push_back(ir::ValueType::Tensor(DataType::kInt64, Shape{1}));
        prepare.const_inputs.push_back(&axes);
      }
      prepare.output_types = {op.output(0).type};
      prepare.num_threads = 1;
      ASSERT_TRUE((*kernel)->Prepare(prepare).ok());
      GuardedWorkspaceContext ctx(inputs, {op.output(0).type}, prepare.workspace_bytes);
      const absl::Status computed = (*kernel)->Compute(ctx);
      ASSERT_TRUE(computed.ok()) << type << ": " << computed;
      EXPECT_TRUE(ctx.GuardIntact()) << type << " wrote past its workspace of " << prepare.workspace_bytes;
      auto expected = test::RunKernel(Host(), op, inputs);
      ASSERT_TRUE(expected.ok()) << expected.status();
      EXPECT_TRUE(test::TensorNear(ctx.outputs()[0].tensor(), (*expected)[0].tensor())) << type;
    }
  }
}

// ReduceMax / ReduceMin over a float row run in float lanes with a NaN flag:
// every row length around the 16-lane block, a NaN at every position of a
// row, infinities, and rows reduced into one output (axes 0 and 2), against
// host_cpu.
TEST(CpuVectorEngineTest, FloatMaxAndMinOverRowsMatchHostCpu) {
  for (const char* type : {"ReduceMax", "ReduceMin"}) {
    for (int64_t n : {1, 2, 7, 15, 16, 17, 31, 32, 33, 100}) {
      Tensor x = test::RandomTensor(DataType::kFloat, Shape{3, n}, 5 + n, -100.0, 100.0);
      float* px = x.data<float>();
      px[n - 1] = std::numeric_limits<float>::infinity();          // row 0
      if (n > 1) px[n] = -std::numeric_limits<float>::infinity();  // row 1
      const ir::AttrMap last = {{"axes", ir::AttrValue(std::vector<int64_t>{1})}};
      EXPECT_TRUE(test::MatchesReference(Vector(), Host(), Typed(type, {x}, last), {x})) << type << " n=" << n;
      for (int64_t at = 0; at < n; ++at) {
        Tensor y = test::RandomTensor(DataType::kFloat, Shape{2, n}, 7 + at);
        y.data<float>()[n + at] = std::numeric_limits<float>::quiet_NaN();  // row 1 only
        auto out = test::RunKernel(Vector(), Typed(type, {y}, last), {y});
        ASSERT_TRUE(out.ok()) << out.status();
        const float* po = (*out)[0].tensor().data<float>();
        EXPECT_FALSE(std::isnan(po[0])) << type << " n=" << n << " at=" << at;
        EXPECT_TRUE(std::isnan(po[1])) << type << " n=" << n << " at=" << at;
      }
    }
    const Tensor z = test::RandomTensor(DataType::kFloat, Shape{3, 4, 21}, 9);
    const ir::AttrMap outer = {{"axes", ir::AttrValue(std::vector<int64_t>{0, 2})}};
    EXPECT_TRUE(test::MatchesReference(Vector(), Host(), Typed(type, {z}, outer), {z})) << type;
  }
}

// Where with each operand contiguous or broadcast along a row (a scalar
// fill beside a mask broadcast over heads: graph attention's masked_fill),
// rows off the vector width, 1-, 2-, 4- and 8-byte elements, and NaN / inf
// selected bit for bit, against host_cpu.
TEST(CpuVectorEngineTest, BroadcastWhereMatchesHostCpu) {
  struct Case {
    Shape c, x, y;
  };
  std::vector<Case> cases;
  for (int64_t n : {1, 7, 16, 33, 100}) {
    cases.push_back({{2, 1, 3, n}, {}, {2, 4, 3, n}});   // mask over heads, scalar x
    cases.push_back({{2, 4, 3, n}, {2, 4, 3, n}, {1}});  // scalar y
    cases.push_back({{2, 4, 3, n}, {1, 1, 1, 1}, {}});   // both scalar
    cases.push_back({{1, 1, 1, n}, {2, 4, 3, n}, {2, 4, 3, n}});
    cases.push_back({{2, 4, 3, 1}, {2, 4, 3, n}, {2, 4, 1, n}});  // strided condition
  }
  for (const Case& cs : cases) {
    for (DataType dtype : {DataType::kFloat, DataType::kFloat16, DataType::kInt64, DataType::kUint8}) {
      Tensor c = test::RandomTensor(DataType::kBool, cs.c, 3);
      Tensor x = test::RandomTensor(dtype, cs.x, 4);
      Tensor y = test::RandomTensor(dtype, cs.y, 5);
      if (dtype == DataType::kFloat) {
        x.data<float>()[0] = std::numeric_limits<float>::quiet_NaN();
        y.data<float>()[0] = -std::numeric_limits<float>::infinity();
      }
      const ir::OpDesc op = Typed("Where", {c, x, y});
      EXPECT_TRUE(test::MatchesReference(Vector(), Host(), op, {c, x, y}))
          << cs.c.ToString() << " " << cs.x.ToString() << " " << cs.y.ToString() << " " << DataTypeName(dtype);
    }
  }
}

// GatherElements along every axis, indices smaller than data on the other
// axes (DGCNN's torch.gather of k neighbours out of n), negative and int32
// indices, 1- to 8-byte elements, one element and none, on one thread and
// on the pool, against host_cpu; an index out of range is an error.
TEST(CpuVectorEngineTest, GatherElementsMatchesHostCpu) {
  struct Case {
    Shape data, indices;
    int64_t axis;
  };
  const std::vector<Case> cases = {
      {{2, 3, 7, 9}, {2, 3, 7, 4}, 3},
      {{2, 3, 7, 9}, {2, 2, 5, 9}, 2},
      {{2, 3, 7, 9}, {1, 3, 7, 9}, 0},
      {{4, 5}, {4, 5}, -1},
      {{4, 5}, {9, 2}, 0},
      {{1}, {1}, 0},
      {{3, 4}, {3, 0}, 1},
  };
  test::RunOptions pooled;
  pooled.thread_pool = test::TestThreadPool();
  uint64_t seed = 21;
  for (const Case& c : cases) {
    const int64_t rank = c.data.rank();
    const int64_t dim = c.data.dim(c.axis < 0 ? c.axis + rank : c.axis);
    for (DataType index_type : {DataType::kInt64, DataType::kInt32}) {
      std::vector<int64_t> values(static_cast<size_t>(c.indices.NumElementsUnchecked()));
      for (size_t j = 0; j < values.size(); ++j) {
        values[j] = static_cast<int64_t>((j * 7 + seed) % static_cast<uint64_t>(2 * dim)) - dim;  // [-dim, dim)
      }
      const Tensor ind =
          index_type == DataType::kInt64
              ? Tensor::FromVector<int64_t>(values, c.indices)
              : Tensor::FromVector<int32_t>(std::vector<int32_t>(values.begin(), values.end()), c.indices);
      for (DataType dtype : {DataType::kFloat, DataType::kFloat16, DataType::kInt64, DataType::kUint8}) {
        const Tensor x = test::RandomTensor(dtype, c.data, seed++);
        const ir::OpDesc op = Typed("GatherElements", {x, ind}, {{"axis", ir::AttrValue(c.axis)}});
        EXPECT_TRUE(test::MatchesReference(Vector(), Host(), op, {x, ind})) << c.data.ToString() << " axis " << c.axis;
        EXPECT_TRUE(test::MatchesReference(Vector(), Host(), op, {x, ind}, std::nullopt, pooled))
            << c.data.ToString() << " axis " << c.axis;
      }
    }
  }
  const Tensor x = test::RandomTensor(DataType::kFloat, Shape{2, 3}, 1);
  const Tensor bad = Tensor::FromVector<int64_t>({0, 3}, Shape{2, 1});
  EXPECT_FALSE(
      test::RunKernel(Vector(), Typed("GatherElements", {x, bad}, {{"axis", ir::AttrValue(int64_t{1})}}), {x, bad})
          .ok());
}

// Transposes of the two innermost merged dims copy tiles: sizes off the
// 16-wide tile, a batch dim in front, 2-, 4- and 8-byte elements, and
// permutations whose dims merge first (DGCNN's [B, N, K, C] -> [B, C, N, K]),
// on one thread and on the pool, against host_cpu.
TEST(CpuVectorEngineTest, TiledTransposesMatchHostCpu) {
  struct Case {
    Shape shape;
    std::vector<int64_t> perm;
  };
  const std::vector<Case> cases = {
      {{17, 33}, {1, 0}},
      {{16, 16}, {1, 0}},
      {{100, 20}, {1, 0}},
      {{3, 40, 17}, {0, 2, 1}},
      {{2, 5, 17, 33}, {0, 3, 1, 2}},
      {{1, 64, 16, 40}, {0, 3, 1, 2}},
      {{33, 2, 18}, {2, 1, 0}},
  };
  test::RunOptions pooled;
  pooled.thread_pool = test::TestThreadPool();
  for (const Case& c : cases) {
    for (DataType dtype : {DataType::kFloat, DataType::kFloat16, DataType::kInt64}) {
      const Tensor x = test::RandomTensor(dtype, c.shape, 11);
      const ir::OpDesc op = Typed("Transpose", {x}, {{"perm", ir::AttrValue(c.perm)}});
      EXPECT_TRUE(test::MatchesReference(Vector(), Host(), op, {x})) << c.shape.ToString();
      EXPECT_TRUE(test::MatchesReference(Vector(), Host(), op, {x}, std::nullopt, pooled)) << c.shape.ToString();
    }
  }
}

// The vectorized f32 exp against libm over the whole range, both ISAs.
TEST(CpuVectorEngineTest, ExpIsWithinTwoUlpsEverywhere) {
  std::vector<float> xs;
  for (float x = -110.0f; x <= 90.0f; x += 0.0137f) xs.push_back(x);
  for (float x : {0.0f, -0.0f, 88.72f, 88.7228f, -87.3f, -103.9f, -104.5f}) xs.push_back(x);
  xs.push_back(std::numeric_limits<float>::infinity());
  xs.push_back(-std::numeric_limits<float>::infinity());
  xs.push_back(std::numeric_limits<float>::quiet_NaN());
  const Tensor x = Tensor::FromVector<float>(xs, Shape{static_cast<int64_t>(xs.size())});
  for (Isa isa : {Isa::kAvx2, Isa::kAvx512}) {
    if (!ForceIsa(isa).ok()) continue;
    auto y = test::RunOp1(Vector(), "Exp", {x});
    ASSERT_TRUE(y.ok()) << y.status();
    for (size_t i = 0; i < xs.size(); ++i) {
      const float got = y->data<float>()[i];
      const float want = std::exp(xs[i]);
      if (std::isnan(want)) {
        EXPECT_TRUE(std::isnan(got)) << xs[i];
      } else if (std::isinf(want)) {
        EXPECT_EQ(got, want) << xs[i];
      } else if (want < std::numeric_limits<float>::min()) {
        EXPECT_NEAR(got, want, std::numeric_limits<float>::min()) << xs[i];
      } else {
        EXPECT_LE(std::fabs(got - want), 2.5f * std::fabs(want) * std::numeric_limits<float>::epsilon()) << xs[i];
      }
    }
  }
  ASSERT_TRUE(SelectIsa(false).ok());
}

TEST(CpuVectorEngineTest, IntegerDivisionByZeroIsAnError) {
  const Tensor a = Tensor::FromVector<int32_t>({1, 2}, Shape{2});
  const Tensor b = Tensor::FromVector<int32_t>({1, 0}, Shape{2});
  auto out = test::RunOp1(Vector(), "Div", {a, b});
  ASSERT_FALSE(out.ok());
  EXPECT_NE(std::string(out.status().message()).find("division by zero"), std::string::npos);
}

}  // namespace
}  // namespace ge::engine::cpu_vector
