// Hand-crafted hostile .gem files (docs/security.md, "hostile .gem"): a
// compiled model is serialized, one field is rewritten as an attacker would,
// and the bytes go through LoadGemFromBytes and a session's executor load,
// as LoadModel's do. Each is refused with INVALID_ARGUMENT naming what is
// wrong (never a crash, never an out-of-bounds access: the ASan tree runs
// this too); the untouched model loads and runs.
#include <functional>
#include <string>

#include "base/ir/proto_convert.h"
#include "base/ir/text_format.h"
#include "compiler/build/model_builder.h"
#include "ge/v1/model.pb.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "runtime/model/gem.h"
#include "session/session.h"
#include "tests/testing/engines_test.h"

namespace ge::runtime {
namespace {

using ::testing::HasSubstr;

// x -> Reshape(x, s) -> Identity -> Relu: three tasks, one weight, one
// dedicated output.
constexpr char kStatic[] = R"(graph main {
    x = Data() {index = 0} -> (f32[2,3])
    s = Const() {value = tensor<i64[2]>[3, 2]} -> (i64[2])
    r = Reshape(x:0, s:0) -> (f32[3,2])
    i = Identity(r:0) -> (f32[3,2])
    y = Relu(i:0) -> (f32[3,2])
    out = NetOutput(y:0)
  })";

// Integer arithmetic: cpu_vector's, whose tasks keep a parameter blob.
constexpr char kVector[] = R"(graph vec {
    x = Data() {index = 0} -> (i32[2,3])
    c = Const() {value = tensor<i32[3]>[1, 2, 3]} -> (i32[3])
    y = Add(x:0, c:0) -> (i32[2,3])
    z = Mul(y:0, y:0) -> (i32[2,3])
    out = NetOutput(z:0)
  })";

class GemHostileTest : public ge::testing::EnginesTest {
 protected:
  v1::CompiledModelDef Compiled(const char* text = kStatic, const OptionMap& options = {}) {
    auto graph = ir::ParseGraph(text);
    EXPECT_TRUE(graph.ok()) << graph.status();
    auto model = compiler::BuildCompiledModel(std::move(*graph), options, *engines_, nullptr);
    EXPECT_TRUE(model.ok()) << model.status();
    EXPECT_TRUE(model->program.has_value());
    auto bytes = SerializeGem(*model->graph, &*model->program, model->options, *engines_, false, "");
    EXPECT_TRUE(bytes.ok()) << bytes.status();
    v1::CompiledModelDef def;
    EXPECT_TRUE(def.ParseFromString(bytes->gem));
    return def;
  }

  // Loads `def` as LoadModel does (bytes, then a session's executor) and
  // runs it once; the first error.
  absl::Status LoadAndRun(const v1::CompiledModelDef& def) {
    auto model = LoadGemFromBytes(def.SerializeAsString(), "the gem field", *engines_);
    if (!model.ok()) return model.status();
    session::Session session(*engines_, {}, nullptr);
    GE_RETURN_IF_ERROR(session.AddCompiledModel(0, *std::move(model)));
    auto out = session.RunGraph(0, {Tensor::FromVector<float>({1, -2, 3, -4, 5, -6}, Shape{2, 3})});
    if (!out.ok()) return out.status();
    if ((*out)[0].tensor().data<float>()[2] != 3 || (*out)[0].tensor().data<float>()[1] != 0) {
      return absl::InternalError("wrong result");
    }
    return absl::OkStatus();
  }

  void ExpectRefused(const std::function<void(v1::CompiledModelDef&)>& edit, const std::string& message,
                     absl::StatusCode code = absl::StatusCode::kInvalidArgument) {
    v1::CompiledModelDef def = Compiled();
    edit(def);
    absl::Status s = LoadAndRun(def);
    EXPECT_EQ(s.code(), code) << s;
    EXPECT_THAT(std::string(s.message()), HasSubstr(message));
  }

  static v1::TaskDefProto* Task(v1::CompiledModelDef& d, const std::string& node) {
    for (auto& t : *d.mutable_program()->mutable_tasks()) {
      if (t.node() == node) return &t;
    }
    ADD_FAILURE() << "no task for " << node;
    return d.mutable_program()->mutable_tasks(0);
  }
  static v1::NodeDef* Node(v1::CompiledModelDef& d, const std::string& name) {
    for (auto& n : *d.mutable_graph()->mutable_nodes()) {
      if (n.name() == name) return &n;
    }
    ADD_FAILURE() << "no node " << name;
    return d.mutable_graph()->mutable_nodes(0);
  }
};

TEST_F(GemHostileTest, TheUntouchedModelLoadsAndRuns) {
  EXPECT_TRUE(LoadAndRun(Compiled()).ok()) << LoadAndRun(Compiled());
}

TEST_F(GemHostileTest, ArenaOffsetsOutsideTheArenaAreRefused) {
  ExpectRefused([](v1::CompiledModelDef& d) { Task(d, "i")->mutable_outputs(0)->set_offset(int64_t{1} << 40); },
                "points outside the program");
  // Inside the arena, but the value runs past its end.
  ExpectRefused(
      [](v1::CompiledModelDef& d) { Task(d, "y")->mutable_inputs(0)->set_offset(d.program().arena_bytes() - 16); },
      "points outside the program");
  ExpectRefused([](v1::CompiledModelDef& d) { Task(d, "i")->mutable_outputs(0)->set_offset(-64); },
                "points outside the program");
  // In bounds but not aligned: kernels may use aligned vector loads.
  ExpectRefused([](v1::CompiledModelDef& d) { Task(d, "i")->mutable_outputs(0)->set_offset(8); },
                "is not aligned to 64 bytes");
  ExpectRefused([](v1::CompiledModelDef& d) { d.mutable_program()->set_arena_bytes(int64_t{1} << 60); },
                "arena of 1152921504606846976 bytes");
}

TEST_F(GemHostileTest, WeightAndInputReferencesMustBeWhatTheyPointTo) {
  // A weight read as a larger tensor than it is.
  ExpectRefused(
      [](v1::CompiledModelDef& d) {
        auto* shape = Task(d, "r")->mutable_inputs(1)->mutable_type()->mutable_tensor()->mutable_shape();
        shape->set_dims(0, 4096);
      },
      "does not match weight 's'");
  ExpectRefused([](v1::CompiledModelDef& d) { Task(d, "r")->mutable_inputs(1)->set_index(7); },
                "points outside the program");
  // The graph input read as another dtype.
  ExpectRefused(
      [](v1::CompiledModelDef& d) {
        Task(d, "r")->mutable_inputs(0)->mutable_type()->mutable_tensor()->set_dtype(v1::DT_DOUBLE);
      },
      "does not match graph input");
  ExpectRefused(
      [](v1::CompiledModelDef& d) {
        d.mutable_program()->mutable_inputs(0)->mutable_type()->mutable_tensor()->mutable_shape()->set_dims(0, 1000);
      },
      "program input 0 is f32[1000,3] but its Data node 'x' is f32[2,3]");
  ExpectRefused([](v1::CompiledModelDef& d) { d.mutable_program()->set_weight_nodes(0, "x"); },
                "weight 'x' is not a Const node with a value");
  ExpectRefused(
      [](v1::CompiledModelDef& d) {
        d.mutable_program()->mutable_output_values(0)->set_kind(v1::ValueRefDef::KIND_NONE);
      },
      "is read from nowhere");
}

TEST_F(GemHostileTest, DtypeMismatchesBetweenProgramAndGraphAreRefused) {
  // The program writes f64 where the node produces f32 (twice the bytes).
  ExpectRefused(
      [](v1::CompiledModelDef& d) {
        Task(d, "i")->mutable_outputs(0)->mutable_type()->mutable_tensor()->set_dtype(v1::DT_INT32);
      },
      "declares f32[3,2] but the program has an arena reference");
  // The graph itself claims a type its op cannot produce.
  ExpectRefused(
      [](v1::CompiledModelDef& d) {
        // Consistent along the edge, so that only inference can tell.
        Node(d, "y")->mutable_output_types(0)->mutable_tensor()->mutable_shape()->set_dims(0, 300);
        Node(d, "out")->mutable_input_types(0)->mutable_tensor()->mutable_shape()->set_dims(0, 300);
      },
      "recorded types do not check");
  // A task on another engine than its node was placed on.
  ExpectRefused([](v1::CompiledModelDef& d) { Task(d, "y")->set_engine("ge_local"); }, "but the node is placed on");
  ExpectRefused([](v1::CompiledModelDef& d) { Task(d, "y")->set_node("x"); }, "node 'x'");
}

TEST_F(GemHostileTest, EngineBlobsOfTheWrongSizeOrVersionAreRefused) {
  // A task of an engine without blobs (the default builder) carrying one.
  std::string plain;
  const v1::CompiledModelDef compiled = Compiled();
  for (const auto& t : compiled.program().tasks()) {
    if (t.param_version() == 0) plain = t.node();
  }
  ASSERT_FALSE(plain.empty());
  ExpectRefused([&](v1::CompiledModelDef& d) { Task(d, plain)->set_params(std::string(4096, '\xff')); },
                "-byte parameter blob without a blob version");
  ExpectRefused([](v1::CompiledModelDef& d) { Task(d, "y")->set_workspace_bytes(uint64_t{1} << 63); },
                "asks for a workspace of");
  // Every engine that keeps a blob checks it against the task it loads.
  const v1::CompiledModelDef def = Compiled(kVector);
  auto load = [&](const v1::CompiledModelDef& d) -> absl::Status {
    auto model = LoadGemFromBytes(d.SerializeAsString(), "the gem field", *engines_);
    if (!model.ok()) return model.status();
    session::Session session(*engines_, {}, nullptr);
    return session.AddCompiledModel(0, *std::move(model));
  };
  ASSERT_TRUE(load(def).ok()) << load(def);
  int blobs = 0;
  for (const auto& t : def.program().tasks()) {
    if (t.param_version() == 0) continue;
    ++blobs;
    v1::CompiledModelDef edited = def;
    for (auto& e : *edited.mutable_program()->mutable_tasks()) {
      if (e.node() == t.node()) e.set_params(e.params().substr(0, e.params().size() / 2));
    }
    absl::Status s = load(edited);
    EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << s;
    EXPECT_THAT(std::string(s.message()), HasSubstr(StrCat("node '", t.node(), "'")));
    EXPECT_THAT(std::string(s.message()), HasSubstr("parameter blob was built for"));
    edited = def;
    for (auto& e : *edited.mutable_program()->mutable_tasks()) {
      if (e.node() == t.node()) e.set_params(std::string(1 << 16, '\0'));
    }
    s = load(edited);
    EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << s;
    EXPECT_LT(s.message().size(), 2000u) << "the blob is not echoed whole";
    edited = def;
    for (auto& e : *edited.mutable_program()->mutable_tasks()) {
      if (e.node() == t.node()) e.set_param_version(e.param_version() + 100);
    }
    s = load(edited);
    EXPECT_FALSE(s.ok()) << t.node();
    EXPECT_THAT(std::string(s.message()), HasSubstr("task parameters of version"));
  }
  EXPECT_GT(blobs, 0) << "the model was meant to have cpu_vector tasks";
}

TEST_F(GemHostileTest, HugeCountsAreRefusedBeforeAnythingIsAllocated) {
  ExpectRefused(
      [](v1::CompiledModelDef& d) {
        auto* shape = Task(d, "y")->mutable_outputs(0)->mutable_type()->mutable_tensor()->mutable_shape();
        shape->set_dims(0, int64_t{1} << 40);
        shape->set_dims(1, int64_t{1} << 40);
      },
      "overflow");
  ExpectRefused(
      [](v1::CompiledModelDef& d) {
        auto* shape = Task(d, "y")->mutable_outputs(0)->mutable_type()->mutable_tensor()->mutable_shape();
        shape->set_dims(0, int64_t{1} << 30);
      },
      "points outside the program");
  ExpectRefused([](v1::CompiledModelDef& d) { d.mutable_program()->clear_output_dedicated(); },
                "output tables of different lengths");
}

TEST_F(GemHostileTest, OptionsAndFileConstantsCannotWidenWhatTheClientMayDo) {
  for (const char* key : {"ge.dump_path", "ge.exec.value_bins", "ge.graph_compiler_cache_dir"}) {
    ExpectRefused([key](v1::CompiledModelDef& d) { (*d.mutable_options())[key] = "/etc"; },
                  StrCat("option ", key, " names a path or file of the daemon"));
  }
  ExpectRefused([](v1::CompiledModelDef& d) { (*d.mutable_options())["ge.no_such_option"] = "1"; },
                "ge.no_such_option");
  // A FileConstant reads a daemon file: never from a client's .gem.
  ExpectRefused(
      [](v1::CompiledModelDef& d) {
        v1::NodeDef* f = d.mutable_graph()->add_nodes();
        f->set_name("secret");
        f->set_type("FileConstant");
        (*f->mutable_attrs())["file_path"].set_s("/etc/passwd");
        (*f->mutable_attrs())["dtype"].set_i(static_cast<int64_t>(DataType::kUint8));
        (*f->mutable_attrs())["shape"].mutable_shape()->add_dims(16);
        auto* type = f->add_output_types()->mutable_tensor();
        type->set_dtype(v1::DT_UINT8);
        type->mutable_shape()->add_dims(16);
      },
      "node 'secret' is a FileConstant");
}

}  // namespace
}  // namespace ge::runtime
