// Attack class "hostile .gem" (docs/security.md): alice compiles a small
// model of her own (CompileGraph with return_model), corrupts it and sends
// it back with LoadModel — truncated, bit-flipped, program references out of
// range (arena offsets, weight and input indices, a reference typed larger
// than the weight behind it), a FileConstant variable naming the canary,
// options inside the file that would widen what she may do, garbage in an
// engine's private task parameters. Each is INVALID_ARGUMENT (DATA_LOSS for
// a checksum) naming what is wrong, checked before anything runs; the
// daemon and bob go on. A flipped bit that leaves a valid model may load,
// and must then run or fail cleanly.
#include <filesystem>

#include "ge/v1/model.pb.h"
#include "tests/adversarial/adversarial_harness.h"

namespace ge::adversarial {
namespace {

using grpc::StatusCode;

const std::vector<StatusCode> kGemRefusal = {StatusCode::INVALID_ARGUMENT, StatusCode::DATA_LOSS};

class GemTest : public AdversarialTest {
 protected:
  void SetUp() override {
    AdversarialTest::SetUp();
    // y = Relu(x . W + b), all static: the .gem has a program with arena,
    // weight and input references.
    const std::string session = SessionWithGraph(
        h().alice(), ParseGraphDef("graph alice_model {\n"
                                   "  x = Data() {index = 0} -> (f32[2,4])\n"
                                   "  w = Const() {value = tensor<f32[4,4]>[1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, "
                                   "13, 14, 15, 16]} -> (f32[4,4])\n"
                                   "  b = Const() {value = tensor<f32[4]>[0.5, -0.5, 1.5, -1.5]} -> (f32[4])\n"
                                   "  m = MatMul(x:0, w:0) -> (f32[2,4])\n"
                                   "  a = Add(m:0, b:0) -> (f32[2,4])\n"
                                   "  y = Relu(a:0) -> (f32[2,4])\n"
                                   "  out = NetOutput(y:0)\n}\n"));
    ASSERT_FALSE(session.empty());
    v1::CompileGraphRequest compile;
    compile.set_session_id(session);
    compile.set_graph_id(1);
    compile.set_return_model(true);
    v1::CompileGraphResponse compiled;
    const grpc::Status s = h().alice().CompileGraph(compile, &compiled);
    ASSERT_TRUE(s.ok()) << s.error_message();
    gem_ = compiled.model();
    ASSERT_TRUE(model_.ParseFromString(gem_)) << "the daemon's .gem is not a CompiledModelDef";
    ASSERT_TRUE(h().alice().CreateSession({}, &session_).ok());
  }

  // LoadModel of `bytes` into alice's session; when it loads, ExecuteModel
  // on a valid input. Both replies are scanned.
  grpc::Status Load(const std::string& bytes, grpc::Status* executed = nullptr) {
    v1::LoadModelRequest load;
    load.set_session_id(session_);
    load.set_gem(bytes);
    v1::LoadModelResponse loaded;
    const grpc::Status s = h().alice().LoadModel(load, &loaded);
    Scan(s, loaded, "LoadModel");
    if (s.ok()) {
      v1::ExecuteModelRequest exec;
      exec.set_session_id(session_);
      exec.set_model_id(loaded.model_id());
      *exec.add_inputs() = FloatValue({1, -2, 3, -4, 5, -6, 7, -8}, {2, 4});
      v1::ExecuteModelResponse out;
      const grpc::Status e = h().alice().ExecuteModel(exec, &out, 30);
      Scan(e, out, "ExecuteModel");
      if (executed != nullptr) *executed = e;
    }
    return s;
  }

  grpc::Status LoadModel(const v1::CompiledModelDef& def) { return Load(def.SerializeAsString()); }

  // The first program reference of `kind` (inputs and outputs of every
  // task), or nullptr (and a failure: the base model must have one).
  v1::ValueRefDef* FindRef(v1::CompiledModelDef& def, v1::ValueRefDef::Kind kind) {
    for (v1::TaskDefProto& task : *def.mutable_program()->mutable_tasks()) {
      for (auto* refs : {task.mutable_inputs(), task.mutable_outputs()}) {
        for (v1::ValueRefDef& ref : *refs) {
          if (ref.kind() == kind) return &ref;
        }
      }
    }
    ADD_FAILURE() << "the base .gem has no program reference of kind " << kind;
    return nullptr;
  }

  std::string gem_;
  v1::CompiledModelDef model_;
  std::string session_;
};

TEST_F(GemTest, TheUncorruptedModelLoadsAndRuns) {
  // The control: what the other cases corrupt is a model that works.
  grpc::Status executed;
  ASSERT_TRUE(Load(gem_, &executed).ok());
  EXPECT_TRUE(executed.ok()) << executed.error_message();
  EXPECT_TRUE(model_.has_program()) << "the base model runs without a static program";
}

TEST_F(GemTest, Truncated) {
  for (size_t keep : {gem_.size() / 2, gem_.size() - 1, gem_.size() * 3 / 4, size_t{17}}) {
    const grpc::Status s = Load(gem_.substr(0, keep));
    EXPECT_TRUE(RefusedWithAnyOf(s, kGemRefusal)) << "kept " << keep << " of " << gem_.size() << " bytes";
  }
}

TEST_F(GemTest, BitFlipped) {
  // 48 positions spread over the file, one bit each.
  int refused = 0, loaded = 0;
  for (int i = 0; i < 48; ++i) {
    std::string bytes = gem_;
    const size_t at = (bytes.size() * static_cast<size_t>(i)) / 48 + static_cast<size_t>(i % 5);
    bytes[at % bytes.size()] ^= static_cast<char>(1 << (i % 8));
    grpc::Status executed;
    const grpc::Status s = Load(bytes, &executed);
    if (s.ok()) {
      ++loaded;
      // A valid model after all: it runs, or fails as a run fails.
      EXPECT_NE(executed.error_code(), StatusCode::UNAVAILABLE) << "flip at " << at;
      EXPECT_NE(executed.error_code(), StatusCode::INTERNAL) << "flip at " << at << ": " << executed.error_message();
    } else {
      ++refused;
      // FAILED_PRECONDITION: a flip in an engine name or CPU feature makes a
      // model built for another host (gem.h), which is what it says.
      EXPECT_TRUE(
          RefusedWithAnyOf(s, {StatusCode::INVALID_ARGUMENT, StatusCode::DATA_LOSS, StatusCode::FAILED_PRECONDITION}))
          << "flip at " << at;
    }
  }
  EXPECT_EQ(refused + loaded, 48);
  EXPECT_TRUE(h().Alive()) << "(c) a flipped bit took the daemon down";
}

TEST_F(GemTest, ArenaOffsetOutOfRange) {
  v1::CompiledModelDef def = model_;
  v1::ValueRefDef* ref = FindRef(def, v1::ValueRefDef::KIND_ARENA);
  ASSERT_NE(ref, nullptr);
  ref->set_offset(def.program().arena_bytes() + 4096);
  EXPECT_TRUE(RefusedWithAnyOf(LoadModel(def), kGemRefusal, {"offset|outside"}));
}

TEST_F(GemTest, NegativeArenaSize) {
  v1::CompiledModelDef def = model_;
  def.mutable_program()->set_arena_bytes(-4096);
  EXPECT_TRUE(RefusedWithAnyOf(LoadModel(def), kGemRefusal, {"arena"}));
}

TEST_F(GemTest, WeightIndexOutOfRange) {
  v1::CompiledModelDef def = model_;
  v1::ValueRefDef* ref = FindRef(def, v1::ValueRefDef::KIND_WEIGHT);
  ASSERT_NE(ref, nullptr);
  ref->set_index(1000);
  EXPECT_TRUE(RefusedWithAnyOf(LoadModel(def), kGemRefusal, {"weight|outside"}));
}

TEST_F(GemTest, InputIndexOutOfRange) {
  v1::CompiledModelDef def = model_;
  v1::ValueRefDef* ref = FindRef(def, v1::ValueRefDef::KIND_INPUT);
  ASSERT_NE(ref, nullptr);
  ref->set_index(7);
  EXPECT_TRUE(RefusedWithAnyOf(LoadModel(def), kGemRefusal, {"input|outside"}));
}

TEST_F(GemTest, WeightReferenceTypedLargerThanItsWeight) {
  // The reference claims f32[1024,1024] over a 16-float weight: a kernel
  // would read 4 MiB past it.
  v1::CompiledModelDef def = model_;
  v1::ValueRefDef* ref = FindRef(def, v1::ValueRefDef::KIND_WEIGHT);
  ASSERT_NE(ref, nullptr);
  v1::ShapeDef* shape = ref->mutable_type()->mutable_tensor()->mutable_shape();
  shape->clear_dims();
  shape->add_dims(1024);
  shape->add_dims(1024);
  EXPECT_TRUE(RefusedWithAnyOf(LoadModel(def), kGemRefusal, {"weight|type|shape"}));
}

TEST_F(GemTest, FileConstantVariableNamingTheCanary) {
  v1::CompiledModelDef def = model_;
  v1::VarInfoDef* var = def.mutable_var_manager()->add_vars();
  var->set_name("stolen");
  var->set_kind(v1::VarInfoDef::KIND_FILE_CONSTANT);
  var->mutable_desc()->set_dtype(v1::DT_UINT8);
  var->mutable_desc()->set_format("ND");
  var->mutable_desc()->mutable_shape()->add_dims(static_cast<int64_t>(ReadFile(h().canary_path()).size()));
  var->set_file_path(h().canary_path());
  var->set_logic_addr(uint64_t{128} << 30);
  var->set_size(ReadFile(h().canary_path()).size());
  // And a FileConstant node in the graph naming it too.
  v1::NodeDef* fc = def.mutable_graph()->add_nodes();
  fc->set_name("stolen");
  fc->set_type("FileConstant");
  (*fc->mutable_attrs())["file_path"].set_s(h().canary_path());
  (*fc->mutable_attrs())["dtype"].set_i(v1::DT_UINT8);
  (*fc->mutable_attrs())["shape"].mutable_shape()->add_dims(var->desc().shape().dims(0));
  *fc->add_output_types()->mutable_tensor() = [&] {
    v1::TensorDescDef t;
    t.set_dtype(v1::DT_UINT8);
    t.mutable_shape()->add_dims(var->desc().shape().dims(0));
    return t;
  }();
  EXPECT_TRUE(RefusedWithAnyOf(LoadModel(def), kGemRefusal, {"file_path|FileConstant"}));
}

TEST_F(GemTest, OptionsInsideTheFileCannotWiden) {
  const std::string target = h().dir() + "/alice-gem-dump";
  v1::CompiledModelDef def = model_;
  (*def.mutable_options())["ge.dump_path"] = target;
  (*def.mutable_options())["ge.dump_graph"] = "2";
  (*def.mutable_options())["ge.exec.value_bins"] =
      "{\"value_bins\": [{\"value_bin_id\": \"w\", \"value_bin_file\": \"" + h().canary_path() + "\"}]}";
  (*def.mutable_options())["ge.exec.inter_op_parallelism"] = "100000";
  const grpc::Status s = LoadModel(def);
  // Refused naming an option, or loaded with the options ignored.
  if (!s.ok()) {
    EXPECT_TRUE(Refused(s, StatusCode::INVALID_ARGUMENT, {"ge."}));
  }
  EXPECT_FALSE(std::filesystem::exists(target)) << "an option inside a client's .gem wrote " << target;
}

TEST_F(GemTest, GarbageInAnEngineTaskBlob) {
  v1::CompiledModelDef def = model_;
  // Every task's private parameters replaced by 64 bytes of garbage (also
  // where the kernel expects none).
  ASSERT_GT(def.program().tasks_size(), 0) << "the base .gem has no tasks";
  for (v1::TaskDefProto& task : *def.mutable_program()->mutable_tasks()) {
    std::string params(64, '\0');
    for (size_t i = 0; i < params.size(); ++i) params[i] = static_cast<char>(0xff ^ (i * 37));
    task.set_params(params);
  }
  EXPECT_TRUE(RefusedWithAnyOf(LoadModel(def), kGemRefusal, {"param"}));
}

}  // namespace
}  // namespace ge::adversarial
