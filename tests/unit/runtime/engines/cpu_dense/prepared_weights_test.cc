// cpu_dense's prepared state (prepared_weights.h): a static task keeps the
// weights its kernel packed at build time, a load adopts them instead of
// packing again, and a description or buffer that does not match what this
// build packs here (layout, size, target, count) is refused or repacked,
// never read.
#include "runtime/engines/cpu_dense/prepared_weights.h"

#include <cstring>

#include "runtime/engines/cpu_dense/cpu_dense_engine.h"
#include "runtime/engines/cpu_dense/shared_packings.h"
#include "runtime/engines/host_cpu/host_cpu_engine.h"
#include "tests/testing/kernel_test_util.h"
#include "tests/unit/runtime/engines/cpu_dense/pass_test_util.h"

namespace ge::engine::cpu_dense {
namespace {

// One convolution with constant weights, as the task builder sees it.
class PreparedConv : public ::testing::Test {
 protected:
  PreparedConv()
      : w_(test::RandomTensor(DataType::kFloat, Shape{32, 16, 3, 3}, 11)),
        x_(test::RandomTensor(DataType::kFloat, Shape{1, 16, 8, 8}, 12)) {
    // Packings shared between kernels (shared_packings.h) would serve the
    // loads below from the build's packing: off, to see what a load alone does.
    SharedPackings::SetEnabled(false);
    test::OpBuilder b("Conv", "conv");
    b.Inputs({x_, w_}).Outputs(1).Attr("pads", ir::AttrValue(std::vector<int64_t>{1, 1, 1, 1}));
    op_ = b.Build();
    auto types = test::InferOutputTypes(op_, {x_, w_});
    EXPECT_TRUE(types.ok()) << types.status();
    if (types.ok()) output_types_ = *types;
    for (int i = 0; i < op_.num_outputs() && i < static_cast<int>(output_types_.size()); ++i) {
      op_.mutable_output(i).type = output_types_[i];
    }
  }

  ~PreparedConv() override { SharedPackings::SetEnabled(true); }
  PrepareContext Context() {
    PrepareContext ctx;
    ctx.op = &op_;
    ctx.input_types = {test::TypeOf(x_), test::TypeOf(w_)};
    ctx.output_types = output_types_;
    ctx.const_inputs = {nullptr, &w_};
    return ctx;
  }

  const KernelBuilder& builder() { return PassTestEngine().kernel_builder(); }
  const KernelFactory& factory() { return PassTestEngine().kernel_factory(); }

  absl::StatusOr<TaskDef> Build() {
    PrepareContext ctx = Context();
    return builder().BuildTask(factory(), "cpu_dense", ctx);
  }

  absl::StatusOr<std::unique_ptr<Kernel>> Load(const TaskDef& task, size_t* workspace = nullptr) {
    PrepareContext ctx = Context();
    auto kernel = builder().LoadKernel(factory(), task, ctx);
    if (workspace != nullptr) *workspace = ctx.workspace_bytes;
    return kernel;
  }

  // Runs a loaded kernel and compares it with host_cpu's convolution.
  void ExpectComputesTheConv(Kernel& kernel, size_t workspace) {
    test::TestExecuteContext ctx({x_, w_}, output_types_, test::TestThreadPool(), workspace);
    ASSERT_TRUE(kernel.Compute(ctx).ok());
    HostCpuEngine host;
    auto expected = test::RunOp1(host, "Conv", {x_, w_}, {{"pads", ir::AttrValue(std::vector<int64_t>{1, 1, 1, 1})}});
    ASSERT_TRUE(expected.ok()) << expected.status();
    EXPECT_TRUE(test::TensorNear(ctx.outputs()[0].tensor(), *expected, {1e-4, 1e-4}));
  }

  // The task's buffers copied into fresh memory, as a load maps them from a file.
  static std::vector<std::shared_ptr<Buffer>> Copies(const TaskDef& task, size_t trim = 0) {
    std::vector<std::shared_ptr<Buffer>> out;
    for (const std::shared_ptr<Buffer>& b : task.prepared) {
      auto copy = Buffer::Allocate(b->size());
      EXPECT_TRUE(copy.ok());
      std::memcpy((*copy)->data(), b->data(), b->size());
      std::shared_ptr<Buffer> keep = *copy;
      out.push_back(Buffer::Wrap(keep->data(), b->size() - trim, [keep] {}));
    }
    return out;
  }

  Tensor w_, x_;
  ir::OpDesc op_;
  std::vector<ir::ValueType> output_types_;
};

TEST_F(PreparedConv, BuildKeepsThePackedWeightsAndLoadAdoptsThem) {
  auto task = Build();
  ASSERT_TRUE(task.ok()) << task.status();
  ASSERT_EQ(task->param_version, kPreparedParamVersion);
  ASSERT_EQ(task->prepared.size(), 1u);
  EXPECT_NE(task->params.find(PackingTarget()), std::string::npos) << task->params;
  TaskDef loaded = *task;
  loaded.prepared = Copies(*task);
  const int64_t packs = WeightPacks().load(), adopted = PreparedAdoptions().load();
  size_t workspace = 0;
  auto kernel = Load(loaded, &workspace);
  ASSERT_TRUE(kernel.ok()) << kernel.status();
  EXPECT_EQ(WeightPacks().load(), packs) << "a load with prepared weights packed them again";
  EXPECT_EQ(PreparedAdoptions().load(), adopted + 1);
  ExpectComputesTheConv(**kernel, workspace);
  ExpectComputesTheConv(**kernel, workspace);
  EXPECT_EQ(WeightPacks().load(), packs) << "a run packed the adopted weights again";
}

TEST_F(PreparedConv, AnInlineGemsTaskWithoutBuffersPacksAtLoad) {
  auto task = Build();
  ASSERT_TRUE(task.ok()) << task.status();
  TaskDef loaded = *task;
  loaded.prepared.clear();
  const int64_t packs = WeightPacks().load();
  size_t workspace = 0;
  auto kernel = Load(loaded, &workspace);
  ASSERT_TRUE(kernel.ok()) << kernel.status();
  EXPECT_EQ(WeightPacks().load(), packs + 1);
  ExpectComputesTheConv(**kernel, workspace);
}

// Each refused buffer is repacked, never read: the result stays right.
TEST_F(PreparedConv, AMismatchedBufferIsRepackedNotRead) {
  auto task = Build();
  ASSERT_TRUE(task.ok()) << task.status();
  auto with_params = [&](std::string params, size_t trim) {
    TaskDef t = *task;
    t.params = std::move(params);
    t.prepared = Copies(*task, trim);
    return t;
  };
  std::string other_layout = task->params;
  const size_t strides = other_layout.find("strides=");
  ASSERT_NE(strides, std::string::npos);
  other_layout.insert(strides + 8, "9");
  std::string other_size = task->params;
  const size_t size_at = other_size.find("buffer ") + 7;
  other_size.insert(size_at, "1");
  std::string other_target = task->params;
  const size_t isa = other_target.find(" isa ");
  ASSERT_NE(isa, std::string::npos);
  other_target.insert(isa + 5, "7");
  const struct {
    const char* what;
    TaskDef task;
  } cases[] = {
      {"another layout", with_params(other_layout, 0)},
      {"another recorded size", with_params(other_size, 0)},
      {"a short buffer", with_params(task->params, 64)},
      {"another target", with_params(other_target, 0)},
  };
  for (const auto& c : cases) {
    const int64_t packs = WeightPacks().load(), refused = PreparedMismatches().load();
    size_t workspace = 0;
    auto kernel = Load(c.task, &workspace);
    ASSERT_TRUE(kernel.ok()) << c.what << ": " << kernel.status();
    EXPECT_EQ(WeightPacks().load(), packs + 1) << c.what;
    EXPECT_EQ(PreparedMismatches().load(), refused + 1) << c.what;
    ExpectComputesTheConv(**kernel, workspace);
  }
}

TEST_F(PreparedConv, AMalformedDescriptionIsRefused) {
  auto task = Build();
  ASSERT_TRUE(task.ok()) << task.status();
  TaskDef garbage = *task;
  garbage.params = "not a description";
  auto kernel = Load(garbage);
  EXPECT_EQ(kernel.status().code(), absl::StatusCode::kInvalidArgument) << kernel.status();
  EXPECT_NE(kernel.status().message().find("node 'conv'"), std::string_view::npos) << kernel.status();

  TaskDef bad_line = *task;
  bad_line.params += "buffer many bytes\n";
  EXPECT_EQ(Load(bad_line).status().code(), absl::StatusCode::kInvalidArgument);

  TaskDef extra = *task;
  extra.prepared = Copies(*task);
  extra.prepared.push_back(extra.prepared[0]);
  auto counted = Load(extra);
  EXPECT_EQ(counted.status().code(), absl::StatusCode::kInvalidArgument) << counted.status();

  TaskDef version = *task;
  version.param_version = kPreparedParamVersion + 1;
  EXPECT_EQ(Load(version).status().code(), absl::StatusCode::kFailedPrecondition);
}

TEST(LayoutKeyTest, NamesEveryFieldOfABlockedLayout) {
  const dnnl::memory::desc plain({32, 16, 3, 3}, dnnl::memory::data_type::f32, dnnl::memory::format_tag::oihw);
  const dnnl::memory::desc blocked({32, 16, 3, 3}, dnnl::memory::data_type::f32, dnnl::memory::format_tag::OIhw8i8o);
  EXPECT_FALSE(LayoutKey(plain).empty());
  EXPECT_NE(LayoutKey(plain), LayoutKey(blocked));
  EXPECT_EQ(LayoutKey(blocked), LayoutKey(dnnl::memory::desc({32, 16, 3, 3}, dnnl::memory::data_type::f32,
                                                             dnnl::memory::format_tag::OIhw8i8o)));
  const dnnl::memory::desc bf16({32, 16, 3, 3}, dnnl::memory::data_type::bf16, dnnl::memory::format_tag::OIhw8i8o);
  EXPECT_NE(LayoutKey(blocked), LayoutKey(bf16));
}

}  // namespace
}  // namespace ge::engine::cpu_dense
