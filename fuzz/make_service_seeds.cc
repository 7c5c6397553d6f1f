// Writes the seed corpus of the service fuzzer (fuzz/service_fuzzer.cc says
// the record format) into a directory: ordinary sessions (create, add,
// compile, run, stream, variables, ExecuteOp, models) and the attack classes
// of docs/security.md (a FileConstant naming the canary, a client
// ge.dump_path, a shared ge.graph_key, another tenant's session, no token,
// a corrupt .gem, a negative dim).
//
//   make_service_seeds DIR      (the committed seeds: fuzz/corpus/service/)
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <string>
#include <vector>

#include "base/ir/proto_convert.h"
#include "base/ir/text_format.h"
#include "ge/v1/service.pb.h"

namespace {

enum Op : uint8_t {
  kCreateSession,
  kDestroySession,
  kAddGraph,
  kRemoveGraph,
  kCompileGraph,
  kRunGraph,
  kListSessions,
  kGetStatus,
  kExecuteOp,
  kLoadModel,
  kUnloadModel,
  kExecuteModel,
  kGetVariable,
  kSetVariable,
  kRunGraphStream
};
constexpr uint8_t kBob = 1, kNoToken = 2;
uint8_t Slot(int slot) { return static_cast<uint8_t>(4 | (slot << 4)); }

class Seed {
 public:
  Seed& Add(Op op, uint8_t flags, const google::protobuf::Message& request) {
    const std::string payload = request.SerializeAsString();
    bytes_ += static_cast<char>(op);
    bytes_ += static_cast<char>(flags);
    bytes_ += static_cast<char>(payload.size() & 0xff);
    bytes_ += static_cast<char>((payload.size() >> 8) & 0xff);
    bytes_ += payload;
    return *this;
  }
  void Write(const std::filesystem::path& dir, const std::string& name) const {
    std::ofstream(dir / name, std::ios::binary) << bytes_;
  }

 private:
  std::string bytes_;
};

ge::v1::GraphDef Graph(const std::string& text) {
  ge::v1::GraphDef def;
  auto g = ge::ir::ParseGraph(text);
  if (!g.ok() || !ge::ir::GraphToProto(**g, &def).ok()) {
    std::cerr << "make_service_seeds: a seed graph does not parse\n";
    std::exit(1);
  }
  return def;
}

ge::v1::Value Floats(const std::vector<float>& v, const std::vector<int64_t>& dims) {
  ge::v1::Value value;
  ge::v1::Tensor* t = value.mutable_tensor();
  t->set_dtype(ge::v1::DT_FLOAT);
  for (int64_t d : dims) t->add_dims(d);
  t->set_raw_data(std::string(reinterpret_cast<const char*>(v.data()), v.size() * sizeof(float)));
  return value;
}

ge::v1::AddGraphRequest AddRelu(uint32_t id, const std::map<std::string, std::string>& options = {}) {
  ge::v1::AddGraphRequest add;
  add.set_graph_id(id);
  *add.mutable_graph_def() = Graph(
      "graph relu {\n  x = Data() {index = 0} -> (f32[2,3])\n"
      "  y = Relu(x:0) -> (f32[2,3])\n  out = NetOutput(y:0)\n}\n");
  for (const auto& [k, v] : options) (*add.mutable_options()->mutable_entries())[k] = v;
  return add;
}

ge::v1::RunGraphRequest RunRelu(uint32_t id) {
  ge::v1::RunGraphRequest run;
  run.set_graph_id(id);
  *run.add_inputs() = Floats({1, -2, 3, -4, 5, -6}, {2, 3});
  return run;
}

ge::v1::CompileGraphRequest Compile(uint32_t id, bool return_model = false) {
  ge::v1::CompileGraphRequest c;
  c.set_graph_id(id);
  c.set_return_model(return_model);
  return c;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::cerr << "usage: make_service_seeds DIR\n";
    return 1;
  }
  const std::filesystem::path dir = argv[1];
  std::filesystem::create_directories(dir);

  Seed()
      .Add(kCreateSession, 0, ge::v1::CreateSessionRequest())
      .Add(kAddGraph, Slot(0), AddRelu(1))
      .Add(kCompileGraph, Slot(0), Compile(1))
      .Add(kRunGraph, Slot(0), RunRelu(1))
      .Add(kRunGraphStream, Slot(0), RunRelu(1))
      .Add(kListSessions, 0, ge::v1::ListSessionsRequest())
      .Add(kGetStatus, 0, ge::v1::GetStatusRequest())
      .Add(kRemoveGraph, Slot(0),
           [] {
             ge::v1::RemoveGraphRequest r;
             r.set_graph_id(1);
             return r;
           }())
      .Write(dir, "session_lifecycle.bin");

  {
    ge::v1::AddGraphRequest add;
    add.set_graph_id(1);
    *add.mutable_graph_def() = Graph(
        "graph counter {\n  x = Data() {index = 0} -> (f32[2])\n"
        "  c = Variable() {dtype = 1, shape = shape[2], value = tensor<f32[2]>[1.0, 2.0]}"
        " -> (f32[2])\n  n = AssignAdd(c:0, x:0) -> (f32[2])\n  out = NetOutput(n:0)\n}\n");
    ge::v1::RunGraphRequest run;
    run.set_graph_id(1);
    *run.add_inputs() = Floats({1, 1}, {2});
    ge::v1::GetVariableRequest get;
    get.set_name("c");
    ge::v1::SetVariableRequest set;
    set.set_name("c");
    *set.mutable_value() = Floats({5, 6}, {2});
    Seed()
        .Add(kCreateSession, kBob, ge::v1::CreateSessionRequest())
        .Add(kAddGraph, kBob | Slot(0), add)
        .Add(kRunGraph, kBob | Slot(0), run)
        .Add(kSetVariable, kBob | Slot(0), set)
        .Add(kGetVariable, kBob | Slot(0), get)
        // alice on bob's session
        .Add(kGetVariable, Slot(0), get)
        .Add(kSetVariable, Slot(0), set)
        .Add(kRunGraph, Slot(0), run)
        .Add(kCompileGraph, Slot(0), Compile(1, true))
        .Add(kDestroySession, Slot(0), ge::v1::DestroySessionRequest())
        .Write(dir, "variables_and_another_tenant.bin");
  }

  {
    ge::v1::ExecuteOpRequest op;
    op.set_op_type("Add");
    *op.add_inputs() = Floats({1.5f, 2}, {2});
    *op.add_inputs() = Floats({3, -4}, {2});
    ge::v1::ExecuteOpRequest fc;
    fc.set_op_type("FileConstant");
    (*fc.mutable_attrs())["file_path"].set_s("/tmp/ged-service-fuzzer/canary.txt");
    (*fc.mutable_attrs())["dtype"].set_i(ge::v1::DT_UINT8);
    (*fc.mutable_attrs())["shape"].mutable_shape()->add_dims(72);
    ge::v1::ExecuteOpRequest neg;
    neg.set_op_type("Relu");
    *neg.add_inputs() = Floats({1, 2, 3, 4}, {-5, 4});
    Seed().Add(kExecuteOp, 0, op).Add(kExecuteOp, kBob, op).Add(kExecuteOp, kNoToken, op).Write(dir, "execute_op.bin");
    Seed().Add(kExecuteOp, 0, fc).Write(dir, "file_constant_canary.bin");
    Seed().Add(kExecuteOp, 0, neg).Write(dir, "negative_dim.bin");
  }

  {
    ge::v1::CreateSessionRequest dump;
    (*dump.mutable_options()->mutable_entries())["ge.dump_path"] = "dumped";
    (*dump.mutable_options()->mutable_entries())["ge.dump_graph"] = "1";
    Seed()
        .Add(kCreateSession, 0, dump)
        .Add(kAddGraph, Slot(0), AddRelu(1))
        .Add(kCompileGraph, Slot(0), Compile(1))
        .Write(dir, "dump_path_option.bin");
  }

  Seed()
      .Add(kCreateSession, kBob, ge::v1::CreateSessionRequest())
      .Add(kAddGraph, kBob | Slot(0), AddRelu(1, {{"ge.graph_key", "shared"}}))
      .Add(kCompileGraph, kBob | Slot(0), Compile(1))
      .Add(kCreateSession, 0, ge::v1::CreateSessionRequest())
      .Add(kAddGraph, Slot(1), AddRelu(1, {{"ge.graph_key", "shared"}}))
      .Add(kCompileGraph, Slot(1), Compile(1, true))
      .Add(kRunGraph, Slot(1), RunRelu(1))
      .Write(dir, "shared_graph_key.bin");

  {
    ge::v1::LoadModelRequest garbage;
    garbage.set_gem(
        std::string("\x08\x03\x12\x05"
                    "0.1.0"
                    "\x32\x02\x0a\x00",
                    13));
    ge::v1::LoadModelRequest by_key;
    by_key.set_cache_key(std::string(64, 'a'));
    ge::v1::ExecuteModelRequest exec;
    exec.set_model_id(1);
    *exec.add_inputs() = Floats({1, -2, 3, -4, 5, -6}, {2, 3});
    ge::v1::UnloadModelRequest unload;
    unload.set_model_id(1);
    Seed()
        .Add(kCreateSession, 0, ge::v1::CreateSessionRequest())
        .Add(kLoadModel, Slot(0), garbage)
        .Add(kLoadModel, Slot(0), by_key)
        .Add(kExecuteModel, Slot(0), exec)
        .Add(kUnloadModel, Slot(0), unload)
        .Write(dir, "models.bin");
  }

  Seed()
      .Add(kCreateSession, kNoToken, ge::v1::CreateSessionRequest())
      .Add(kListSessions, kNoToken, ge::v1::ListSessionsRequest())
      .Add(kGetStatus, kNoToken, ge::v1::GetStatusRequest())
      .Write(dir, "no_token.bin");
  std::cout << "make_service_seeds: wrote " << dir << "\n";
  return 0;
}
