// A repository of generated ONNX models in process (server/serving/
// repository.h, served_model.h): completion of a config from the ONNX
// model, a model failing alone (its reason in the index, strict readiness
// false), the codes of Find, and batched inference through the compiled
// gears with correct outputs per request.
#include "server/serving/repository.h"

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <future>

#include "gtest/gtest.h"
#include "onnx/onnx_pb.h"

namespace ge::server::serving {
namespace {

namespace fs = std::filesystem;
using namespace std::chrono_literals;

// Y = X + 1 over [B, 4] floats; dim 0 dynamic unless `batch` > 0.
void WriteAddModel(const fs::path& file, int64_t batch) {
  onnx::ModelProto model;
  model.set_ir_version(8);
  model.add_opset_import()->set_version(17);
  onnx::GraphProto* g = model.mutable_graph();
  g->set_name("add_one");
  for (auto [list, name] : {std::pair{g->add_input(), "X"}, std::pair{g->add_output(), "Y"}}) {
    list->set_name(name);
    auto* t = list->mutable_type()->mutable_tensor_type();
    t->set_elem_type(onnx::TensorProto::FLOAT);
    auto* d0 = t->mutable_shape()->add_dim();
    if (batch > 0) {
      d0->set_dim_value(batch);
    } else {
      d0->set_dim_param("batch");
    }
    t->mutable_shape()->add_dim()->set_dim_value(4);
  }
  onnx::TensorProto* w = g->add_initializer();
  w->set_name("W");
  w->set_data_type(onnx::TensorProto::FLOAT);
  w->add_float_data(1.0f);
  onnx::NodeProto* add = g->add_node();
  add->set_op_type("Add");
  add->add_input("X");
  add->add_input("W");
  add->add_output("Y");
  fs::create_directories(file.parent_path());
  std::ofstream out(file, std::ios::binary);
  model.SerializeToOstream(&out);
}

void WriteText(const fs::path& file, const std::string& text) {
  fs::create_directories(file.parent_path());
  std::ofstream(file) << text;
}

class RepositoryTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("served_model_test_" + std::to_string(::getpid()));
    fs::remove_all(dir_);
    WriteAddModel(dir_ / "add" / "1" / "model.onnx", 0);
    WriteText(dir_ / "add" / "config.pbtxt",
              "max_batch_size: 4\ndynamic_batching { preferred_batch_size: [ 2 ] max_queue_delay_microseconds: "
              "2000000 }\n");
    WriteAddModel(dir_ / "fixed" / "1" / "model.onnx", 2);
    WriteText(dir_ / "fixed" / "config.pbtxt", "max_batch_size: 4\n");
    WriteAddModel(dir_ / "typo" / "1" / "model.onnx", 0);
    WriteText(dir_ / "typo" / "config.pbtxt", "name: \"typo\"\nmax_batch_sizes: 4\n");
    WriteAddModel(dir_ / "plain" / "3" / "model.onnx", 0);  // no config at all
    session::RuntimeOptions options;
    options.devices = {session::DeviceConfig{"cpu0", 1, 0}};
    auto rt = session::Runtime::Create(options);
    ASSERT_TRUE(rt.ok()) << rt.status();
    runtime_ = *std::move(rt);
    RepositoryOptions ro;
    ro.dir = dir_.string();
    auto repo = ModelRepository::Open(*runtime_, ro);
    ASSERT_TRUE(repo.ok()) << repo.status();
    repo_ = *std::move(repo);
    repo_->LoadStartupModels();
  }
  void TearDown() override {
    repo_.reset();
    runtime_.reset();
    fs::remove_all(dir_);
  }
  fs::path dir_;
  std::unique_ptr<session::Runtime> runtime_;
  std::unique_ptr<ModelRepository> repo_;
};

TEST_F(RepositoryTest, CompletesTheConfigFromTheModel) {
  absl::StatusOr<std::shared_ptr<ServedModel>> add = repo_->Find("add", "");
  ASSERT_TRUE(add.ok()) << add.status();
  const inference::ModelConfig& c = (*add)->config();
  EXPECT_EQ(c.name(), "add");
  EXPECT_EQ(c.platform(), "onnxruntime_onnx");
  ASSERT_EQ(c.input_size(), 1);
  EXPECT_EQ(c.input(0).name(), "X");
  EXPECT_EQ(c.input(0).data_type(), inference::TYPE_FP32);
  ASSERT_EQ(c.input(0).dims_size(), 1);
  EXPECT_EQ(c.input(0).dims(0), 4);
  ASSERT_EQ(c.output_size(), 1);
  EXPECT_EQ(c.output(0).name(), "Y");
  ASSERT_EQ(c.output(0).dims_size(), 1);
  EXPECT_EQ(c.output(0).dims(0), 4);

  absl::StatusOr<std::shared_ptr<ServedModel>> plain = repo_->Find("plain", "3");
  ASSERT_TRUE(plain.ok()) << plain.status();
  EXPECT_EQ((*plain)->config().max_batch_size(), 0);
  ASSERT_EQ((*plain)->config().input(0).dims_size(), 2);
  EXPECT_EQ((*plain)->config().input(0).dims(0), -1);
}

TEST_F(RepositoryTest, AFailedModelIsNotReadyAndTheRestServe) {
  std::map<std::string, IndexEntry> index;
  for (const IndexEntry& e : repo_->Index(false)) index[e.name] = e;
  ASSERT_EQ(index.size(), 4u);
  EXPECT_EQ(index["add"].state, "READY");
  EXPECT_EQ(index["add"].version, "1");
  EXPECT_EQ(index["fixed"].state, "UNAVAILABLE");
  EXPECT_NE(index["fixed"].reason.find("dynamic dim 0"), std::string::npos) << index["fixed"].reason;
  EXPECT_EQ(index["typo"].state, "UNAVAILABLE");
  EXPECT_NE(index["typo"].reason.find("config.pbtxt:2:"), std::string::npos) << index["typo"].reason;
  EXPECT_EQ(repo_->Index(true).size(), 2u);
  EXPECT_FALSE(repo_->Ready());  // Triton's strict rule

  EXPECT_EQ(repo_->Find("nope", "").status().code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(repo_->Find("fixed", "").status().code(), absl::StatusCode::kUnavailable);
  EXPECT_EQ(repo_->Find("add", "2").status().code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(repo_->Find("a/b", "").status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(repo_->Find("..", "").status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(repo_->RequestLoad("add").code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(repo_->RequestUnload("add").code(), absl::StatusCode::kFailedPrecondition);
}

InferRequest AddRequest(std::vector<float> values) {
  InferRequest r;
  r.model = "add";
  const int64_t rows = static_cast<int64_t>(values.size()) / 4;
  r.inputs.push_back({"X", Tensor::FromVector<float>(values, Shape{rows, 4})});
  return r;
}

TEST_F(RepositoryTest, BatchesRequestsAndSplitsTheResults) {
  std::promise<absl::StatusOr<InferResult>> a, b, bad;
  repo_->Infer(AddRequest({0, 1, 2, 3}), [&a](absl::StatusOr<InferResult> r) { a.set_value(std::move(r)); });
  repo_->Infer(AddRequest({10, 11, 12, 13}), [&b](absl::StatusOr<InferResult> r) { b.set_value(std::move(r)); });
  auto fa = a.get_future();
  auto fb = b.get_future();
  ASSERT_EQ(fa.wait_for(60s), std::future_status::ready);
  ASSERT_EQ(fb.wait_for(60s), std::future_status::ready);
  absl::StatusOr<InferResult> ra = fa.get();
  absl::StatusOr<InferResult> rb = fb.get();
  ASSERT_TRUE(ra.ok()) << ra.status();
  ASSERT_TRUE(rb.ok()) << rb.status();
  ASSERT_EQ(ra->outputs.size(), 1u);
  EXPECT_EQ(ra->outputs[0].name, "Y");
  EXPECT_EQ(ra->outputs[0].tensor.shape(), (Shape{1, 4}));
  EXPECT_EQ(ra->outputs[0].tensor.data<float>()[3], 4.0f);
  EXPECT_EQ(rb->outputs[0].tensor.data<float>()[0], 11.0f);
  const ModelStats stats = (*repo_->Find("add", ""))->stats();
  EXPECT_EQ(stats.execution_count, 1u);  // one batch of the preferred 2 rows
  EXPECT_EQ(stats.inference_count, 2u);

  // Five rows: above max_batch_size 4, refused naming it.
  InferRequest big = AddRequest(std::vector<float>(20, 1.0f));
  repo_->Infer(std::move(big), [&bad](absl::StatusOr<InferResult> r) { bad.set_value(std::move(r)); });
  absl::StatusOr<InferResult> rbad = bad.get_future().get();
  EXPECT_EQ(rbad.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(rbad.status().message().find("max_batch_size 4"), std::string::npos) << rbad.status();
}

}  // namespace
}  // namespace ge::server::serving
