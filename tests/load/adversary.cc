// The hostile tenant of ged_load's mixed runs (see adversary.h).
#include "tests/load/adversary.h"

#include <algorithm>
#include <condition_variable>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <functional>
#include <mutex>
#include <utility>

#include "base/ir/proto_convert.h"
#include "base/ir/text_format.h"

namespace ge::load {
namespace {

using Clock = std::chrono::steady_clock;
using grpc::StatusCode;

const char* Code(StatusCode code) {
  switch (code) {
    case StatusCode::OK: return "OK";
    case StatusCode::CANCELLED: return "CANCELLED";
    case StatusCode::INVALID_ARGUMENT: return "INVALID_ARGUMENT";
    case StatusCode::DEADLINE_EXCEEDED: return "DEADLINE_EXCEEDED";
    case StatusCode::NOT_FOUND: return "NOT_FOUND";
    case StatusCode::ALREADY_EXISTS: return "ALREADY_EXISTS";
    case StatusCode::PERMISSION_DENIED: return "PERMISSION_DENIED";
    case StatusCode::RESOURCE_EXHAUSTED: return "RESOURCE_EXHAUSTED";
    case StatusCode::FAILED_PRECONDITION: return "FAILED_PRECONDITION";
    case StatusCode::OUT_OF_RANGE: return "OUT_OF_RANGE";
    case StatusCode::UNAVAILABLE: return "UNAVAILABLE";
    case StatusCode::DATA_LOSS: return "DATA_LOSS";
    case StatusCode::UNAUTHENTICATED: return "UNAUTHENTICATED";
    case StatusCode::INTERNAL: return "INTERNAL";
    case StatusCode::UNIMPLEMENTED: return "UNIMPLEMENTED";
    default: return "OTHER";
  }
}

v1::Value FloatValue(const std::vector<float>& values, const std::vector<int64_t>& dims) {
  v1::Value v;
  v1::Tensor* t = v.mutable_tensor();
  t->set_dtype(v1::DT_FLOAT);
  for (int64_t d : dims) t->add_dims(d);
  t->set_raw_data(std::string(reinterpret_cast<const char*>(values.data()), values.size() * sizeof(float)));
  return v;
}

v1::Value Int64Value(const std::vector<int64_t>& values, const std::vector<int64_t>& dims) {
  v1::Value v;
  v1::Tensor* t = v.mutable_tensor();
  t->set_dtype(v1::DT_INT64);
  for (int64_t d : dims) t->add_dims(d);
  t->set_raw_data(std::string(reinterpret_cast<const char*>(values.data()), values.size() * sizeof(int64_t)));
  return v;
}

v1::GraphDef TextGraph(const std::string& text) {
  v1::GraphDef def;
  absl::StatusOr<std::unique_ptr<ir::Graph>> g = ir::ParseGraph(text);
  if (g.ok()) (void)ir::GraphToProto(**g, &def);
  return def;  // empty when the text is wrong: the daemon refuses it, a surprise shows the bug
}

v1::AttrValueDef StringAttr(const std::string& s) {
  v1::AttrValueDef a;
  a.set_s(s);
  return a;
}

// fc = FileConstant(path attributes) -> u8[bytes]; NetOutput(fc).
v1::GraphDef FileConstantGraph(const std::map<std::string, std::string>& attrs, int64_t bytes) {
  v1::GraphDef g;
  g.set_name("reach");
  v1::NodeDef* fc = g.add_nodes();
  fc->set_name("fc");
  fc->set_type("FileConstant");
  v1::TensorDescDef* t = fc->add_output_types()->mutable_tensor();
  t->set_dtype(v1::DT_UINT8);
  t->mutable_shape()->add_dims(bytes);
  (*fc->mutable_attrs())["shape"].mutable_shape()->add_dims(bytes);
  (*fc->mutable_attrs())["dtype"].set_i(v1::DT_UINT8);
  for (const auto& [k, v] : attrs) (*fc->mutable_attrs())[k] = StringAttr(v);
  v1::NodeDef* out = g.add_nodes();
  out->set_name("out");
  out->set_type("NetOutput");
  out->add_inputs()->set_node("fc");
  *out->add_input_types() = fc->output_types(0);
  return g;
}

}  // namespace

void AdversaryStats::Merge(const AdversaryStats& o) {
  for (const auto& [attack, codes] : o.outcomes) {
    for (const auto& [code, n] : codes) outcomes[attack][code] += n;
  }
  surprises += o.surprises;
  leaks += o.leaks;
  for (const std::string& s : o.samples) {
    if (samples.size() < 16) samples.push_back(s);
  }
}

// One attack's result: the status of the call that decides it, every byte
// the daemon sent back (replies and error messages, for the leak scan) and
// the codes the contract allows.
struct Adversary::Outcome {
  grpc::Status status;
  std::string replies;
  std::set<StatusCode> allowed;
  std::string note;  // a contract breach that is not a status code (the hijack)
};

namespace {

// The catalogue, in a fixed order (the PRNG picks by index).
enum Kind : size_t {
  kExecFileConstantPath,
  kGraphFileConstantLocation,
  kValueBinsOption,
  kDumpPathOption,
  kTwoBillionOutputs,
  kOverflowingDims,
  kTensorAboveQuota,
  kIntermediateAboveQuota,
  kThousandsOfThreads,
  kNegativeDim,
  kHostileGem,
  kForeignSession,
  kNoToken,
  kWrongToken,
  kQueueFlood,
  kGraphsPerSession,
  kGraphKeyHijack,
  kKindCount,
};

const char* const kKindNames[kKindCount] = {
    "exec_file_constant_path",
    "graph_file_constant_location",
    "value_bins_option",
    "dump_path_option",
    "two_billion_outputs",
    "overflowing_dims",
    "tensor_above_quota",
    "intermediate_above_quota",
    "thousands_of_threads",
    "negative_dim",
    "hostile_gem",
    "foreign_session",
    "no_token",
    "wrong_token",
    "queue_flood",
    "graphs_per_session",
    "graph_key_hijack",
};

}  // namespace

size_t Adversary::CatalogueSize() { return kKindCount; }

Adversary::Adversary(AdversaryOptions options) : options_(std::move(options)), rng_(options_.seed) {
  client::ClientOptions o;
  o.address = options_.address;
  o.token = options_.token;
  o.max_retries = 0;
  client_ = std::make_unique<client::Client>(o);
  // Calls without a token go through this client's stub with a bare
  // context (an empty ClientOptions::token would mean $GED_TOKEN).
  anonymous_ = std::make_unique<client::Client>(o);
  o.token = options_.token + "-guessed";
  wrong_token_ = std::make_unique<client::Client>(o);
}

Adversary::~Adversary() = default;

void Adversary::Run(Clock::time_point end) {
  while (Clock::now() < end) {
    const size_t kind = static_cast<size_t>(rng_() % kKindCount);
    Record(kKindNames[kind], Attack(kind));
  }
}

namespace {

// A refusal for the hostile tenant's own quotas (its sessions, runs in
// flight, queued calls or memory, filled by its other attacks) may come
// before the check an attack aims at; it names the quota's key.
bool OwnQuota(const grpc::Status& s) {
  if (s.error_code() != StatusCode::RESOURCE_EXHAUSTED) return false;
  for (const char* key : {"max_sessions", "max_concurrent_runs", "max_queued_calls", "max_memory_bytes"}) {
    if (s.error_message().find(key) != std::string::npos) return true;
  }
  return false;
}

}  // namespace

void Adversary::Record(const std::string& attack, const Outcome& outcome) {
  stats_.outcomes[attack][Code(outcome.status.error_code())] += 1;
  const bool surprise =
      (!outcome.allowed.contains(outcome.status.error_code()) && !OwnQuota(outcome.status)) || !outcome.note.empty();
  // Any 8-byte window of the secret counts as a leak.
  bool leak = false;
  const std::string& secret = options_.canary_secret;
  const std::string seen = outcome.replies + outcome.status.error_message();
  for (size_t i = 0; !leak && secret.size() >= 8 && i + 8 <= secret.size(); i += 4) {
    leak = seen.find(secret.substr(i, 8)) != std::string::npos;
  }
  if (surprise) stats_.surprises += 1;
  if (leak) stats_.leaks += 1;
  if ((surprise || leak) && stats_.samples.size() < 16) {
    stats_.samples.push_back(attack + ": " + Code(outcome.status.error_code()) + " " +
                             outcome.status.error_message().substr(0, 200) +
                             (outcome.note.empty() ? "" : " (" + outcome.note + ")") + (leak ? " [LEAK]" : ""));
  }
}

Adversary::Outcome Adversary::Attack(size_t kind) {
  Outcome o;
  const auto session = [&](const std::map<std::string, std::string>& opts, std::string* id) {
    grpc::Status s = client_->CreateSession(opts, id);
    return s;
  };
  const auto destroy = [&](const std::string& id) {
    if (!id.empty()) (void)client_->DestroySession(id);
  };
  // AddGraph (+ CompileGraph + RunGraph with `inputs` when AddGraph passed)
  // in a fresh session: the first refusal decides.
  const auto add_compile_run = [&](const v1::GraphDef& def, const std::map<std::string, std::string>& opts,
                                   const std::vector<v1::Value>& inputs) {
    std::string id;
    grpc::Status s = session({}, &id);
    if (!s.ok()) return s;
    v1::AddGraphRequest add;
    add.set_session_id(id);
    add.set_graph_id(1);
    *add.mutable_graph_def() = def;
    for (const auto& [k, v] : opts) (*add.mutable_options()->mutable_entries())[k] = v;
    v1::AddGraphResponse added;
    s = client_->AddGraph(add, &added);
    o.replies += added.SerializeAsString();
    if (s.ok()) {
      v1::CompileGraphResponse compiled;
      s = client_->CompileGraph(id, 1, &compiled);
      o.replies += compiled.SerializeAsString();
    }
    if (s.ok()) {
      v1::RunGraphRequest run;
      run.set_session_id(id);
      run.set_graph_id(1);
      for (const v1::Value& v : inputs) *run.add_inputs() = v;
      v1::RunGraphResponse out;
      s = client_->RunGraph(run, &out, /*timeout_seconds=*/30);
      o.replies += out.SerializeAsString();
    }
    destroy(id);
    return s;
  };
  // A fresh session `*id` with `def` added as graph 1 and compiled; the
  // first failure decides (the session, if made, is the caller's to destroy).
  const auto session_with_graph = [&](const v1::GraphDef& def, const std::map<std::string, std::string>& opts,
                                      std::string* id) {
    grpc::Status s = session({}, id);
    if (!s.ok()) return s;
    v1::AddGraphRequest add;
    add.set_session_id(*id);
    add.set_graph_id(1);
    *add.mutable_graph_def() = def;
    for (const auto& [k, v] : opts) (*add.mutable_options()->mutable_entries())[k] = v;
    v1::AddGraphResponse added;
    v1::CompileGraphResponse compiled;
    s = client_->AddGraph(add, &added);
    if (s.ok()) s = client_->CompileGraph(*id, 1, &compiled);
    o.replies += added.SerializeAsString() + compiled.SerializeAsString();
    return s;
  };
  const auto execute = [&](const v1::ExecuteOpRequest& r) {
    v1::ExecuteOpResponse out;
    grpc::Status s = client_->ExecuteOp(r, &out);
    o.replies += out.SerializeAsString();
    return s;
  };
  const std::filesystem::path canary(options_.canary_path);

  switch (kind) {
    case kExecFileConstantPath: {
      v1::ExecuteOpRequest r;
      r.set_op_type("FileConstant");
      (*r.mutable_attrs())["shape"].mutable_shape()->add_dims(64);
      (*r.mutable_attrs())["dtype"].set_i(v1::DT_UINT8);
      (*r.mutable_attrs())["file_path"] = StringAttr(options_.canary_path);
      o.status = execute(r);
      o.allowed = {StatusCode::INVALID_ARGUMENT};
      break;
    }
    case kGraphFileConstantLocation:
      o.status = add_compile_run(
          FileConstantGraph({{"location", canary.filename().string()}, {"_model_dir", canary.parent_path().string()}},
                            64),
          {}, {});
      o.allowed = {StatusCode::INVALID_ARGUMENT};
      break;
    case kValueBinsOption: {
      std::string id;
      o.status = session({{"ge.exec.value_bins", "{\"value_bins\": [{\"value_bin_id\": \"x\", \"value_bin_file\": \"" +
                                                     options_.canary_path + "\"}]}"}},
                         &id);
      destroy(id);
      o.allowed = {StatusCode::INVALID_ARGUMENT};
      break;
    }
    case kDumpPathOption:
      o.status = add_compile_run(TextGraph("graph g {\n  x = Data() {index = 0} -> (f32[4])\n"
                                           "  y = Relu(x:0) -> (f32[4])\n  out = NetOutput(y:0)\n}\n"),
                                 {{"ge.dump_graph", "1"}, {"ge.dump_path", "/tmp/ged-adversary-dump"}},
                                 {FloatValue({1, -1, 2, -2}, {4})});
      o.allowed = {StatusCode::INVALID_ARGUMENT};
      break;
    case kTwoBillionOutputs: {
      v1::ExecuteOpRequest r;
      r.set_op_type("Relu");
      *r.add_inputs() = FloatValue({-1, 1}, {2});
      r.set_num_outputs(2000000000);
      o.status = execute(r);
      o.allowed = {StatusCode::RESOURCE_EXHAUSTED};
      break;
    }
    case kOverflowingDims: {
      v1::ExecuteOpRequest r;
      r.set_op_type("Relu");
      v1::Value v = FloatValue({1, 2, 3, 4}, {int64_t{1} << 32, int64_t{1} << 32, 16});
      *r.add_inputs() = v;
      o.status = execute(r);
      o.allowed = {StatusCode::INVALID_ARGUMENT};
      break;
    }
    case kTensorAboveQuota: {
      // 1 GiB of f32 asked of ConstantOfShape: above the tenant's quota and
      // every sane max_tensor_bytes.
      v1::ExecuteOpRequest r;
      r.set_op_type("ConstantOfShape");
      *r.add_inputs() = Int64Value({int64_t{1} << 28}, {1});
      o.status = execute(r);
      o.allowed = {StatusCode::RESOURCE_EXHAUSTED};
      break;
    }
    case kIntermediateAboveQuota:
      o.status = add_compile_run(TextGraph("graph wide {\n  x = Data() {index = 0} -> (f32[1])\n"
                                           "  shape = Data() {index = 1} -> (i64[2])\n"
                                           "  e = Expand(x:0, shape:0) -> (f32[-1,-1])\n"
                                           "  s = ReduceSum(e:0) {keepdims = 0} -> (f32[])\n"
                                           "  out = NetOutput(s:0)\n}\n"),
                                 {}, {FloatValue({1}, {1}), Int64Value({16384, 16384}, {2})});
      o.allowed = {StatusCode::RESOURCE_EXHAUSTED};
      break;
    case kThousandsOfThreads: {
      std::string id;
      o.status = session({{"ge.exec.inter_op_parallelism", "100000"}}, &id);
      destroy(id);
      // Over the option's own range (INVALID_ARGUMENT) or the daemon's
      // max_inter_op_threads (RESOURCE_EXHAUSTED): both refuse before a thread.
      o.allowed = {StatusCode::INVALID_ARGUMENT, StatusCode::RESOURCE_EXHAUSTED};
      break;
    }
    case kNegativeDim: {
      v1::GraphDef def = TextGraph(
          "graph neg {\n  x = Data() {index = 0} -> (f32[5,4])\n"
          "  y = Relu(x:0) -> (f32[5,4])\n  out = NetOutput(y:0)\n}\n");
      for (v1::NodeDef& n : *def.mutable_nodes()) {
        for (v1::ValueTypeDef& t : *n.mutable_output_types()) t.mutable_tensor()->mutable_shape()->set_dims(0, -5);
        for (v1::ValueTypeDef& t : *n.mutable_input_types()) t.mutable_tensor()->mutable_shape()->set_dims(0, -5);
      }
      o.status = add_compile_run(def, {}, {FloatValue(std::vector<float>(20, 1), {5, 4})});
      o.allowed = {StatusCode::INVALID_ARGUMENT};
      break;
    }
    case kHostileGem: {
      std::string id;
      o.status = session({}, &id);
      if (o.status.ok()) {
        // A .gem's magic followed by bytes of no meaning, or by a stretch of
        // the canary's own path (the loader must not open what it names).
        std::string bytes = "GEM1";
        const size_t n = 16 + rng_() % 4096;
        for (size_t i = 0; i < n; ++i) bytes.push_back(static_cast<char>(rng_()));
        if (rng_() % 2 == 0) bytes += options_.canary_path;
        v1::LoadModelRequest r;
        r.set_session_id(id);
        r.set_gem(bytes);
        v1::LoadModelResponse out;
        o.status = client_->LoadModel(r, &out);
        o.replies += out.SerializeAsString();
      }
      destroy(id);
      o.allowed = {StatusCode::INVALID_ARGUMENT, StatusCode::DATA_LOSS};
      break;
    }
    case kForeignSession: {
      // Session ids of ged's form are not guessable; a guess must be NOT_FOUND
      // (or PERMISSION_DENIED, were it another tenant's), never a run.
      char guess[33];
      std::snprintf(guess, sizeof(guess), "%016llx%016llx", static_cast<unsigned long long>(rng_()),
                    static_cast<unsigned long long>(rng_()));
      v1::RunGraphRequest run;
      run.set_session_id(guess);
      run.set_graph_id(1);
      *run.add_inputs() = FloatValue(std::vector<float>(64, 1), {1, 64});
      v1::RunGraphResponse out;
      o.status = client_->RunGraph(run, &out);
      o.replies += out.SerializeAsString();
      o.allowed = {StatusCode::NOT_FOUND, StatusCode::PERMISSION_DENIED, StatusCode::INVALID_ARGUMENT};
      break;
    }
    case kNoToken: {
      grpc::ClientContext ctx;
      ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(30));
      v1::CreateSessionRequest request;
      v1::CreateSessionResponse response;
      o.status = anonymous_->stub().CreateSession(&ctx, request, &response);
      o.replies += response.SerializeAsString();
      if (o.status.ok()) (void)anonymous_->DestroySession(response.session_id());
      o.allowed = {StatusCode::UNAUTHENTICATED};
      break;
    }
    case kWrongToken: {
      std::string id;
      o.status = wrong_token_->CreateSession({}, &id);
      if (o.status.ok()) (void)wrong_token_->DestroySession(id);
      o.allowed = {StatusCode::UNAUTHENTICATED};
      break;
    }
    case kQueueFlood: {
      // Many runs of a slow graph at once: beyond the tenant's
      // max_queued_calls they are refused; none may fail otherwise.
      std::string id;
      o.status = session_with_graph(
          TextGraph("graph slow {\n  x = Data() {index = 0} -> (f32[256,256])\n"
                    "  a = MatMul(x:0, x:0) -> (f32[256,256])\n  b = MatMul(a:0, x:0) -> (f32[256,256])\n"
                    "  out = NetOutput(b:0)\n}\n"),
          {}, &id);
      if (o.status.ok()) {
        constexpr int kRuns = 48;
        v1::RunGraphRequest run;
        run.set_session_id(id);
        run.set_graph_id(1);
        *run.add_inputs() = FloatValue(std::vector<float>(256 * 256, 0.01f), {256, 256});
        std::mutex mu;
        std::condition_variable cv;
        int done = 0;
        std::vector<grpc::Status> results(kRuns);
        std::vector<v1::RunGraphResponse> outs(kRuns);
        for (int i = 0; i < kRuns; ++i) {
          client_->RunGraphAsync(run, &outs[static_cast<size_t>(i)], [&, i](grpc::Status s) {
            std::lock_guard<std::mutex> lock(mu);
            results[static_cast<size_t>(i)] = std::move(s);
            ++done;
            cv.notify_one();
          });
        }
        std::unique_lock<std::mutex> lock(mu);
        cv.wait(lock, [&] { return done == kRuns; });
        // The worst of them decides: a refusal other than back-pressure is a surprise.
        for (const grpc::Status& s : results) {
          if (!s.ok() && (o.status.ok() || s.error_code() != StatusCode::RESOURCE_EXHAUSTED)) o.status = s;
        }
      }
      destroy(id);
      o.allowed = {StatusCode::OK, StatusCode::RESOURCE_EXHAUSTED};
      break;
    }
    case kGraphsPerSession: {
      std::string id;
      o.status = session({}, &id);
      if (!o.status.ok()) break;
      const v1::GraphDef def = TextGraph(
          "graph g {\n  x = Data() {index = 0} -> (f32[4])\n  y = Relu(x:0) -> (f32[4])\n  out = NetOutput(y:0)\n}\n");
      for (uint32_t g = 1; g <= 4096 && o.status.ok(); ++g) {
        v1::AddGraphRequest add;
        add.set_session_id(id);
        add.set_graph_id(g);
        *add.mutable_graph_def() = def;
        v1::AddGraphResponse added;
        o.status = client_->AddGraph(add, &added);
      }
      destroy(id);
      o.allowed = {StatusCode::RESOURCE_EXHAUSTED};
      break;
    }
    case kGraphKeyHijack: {
      if (options_.victim_graph_key.empty()) {
        o.allowed = {StatusCode::OK};
        break;
      }
      // The regular tenant's graph is relu(x W + b) with W = 1/64, b = 0.5;
      // ours is x + 7 under the same key. We must get our own model back.
      std::string id;
      o.status = session_with_graph(TextGraph("graph hijack {\n  x = Data() {index = 0} -> (f32[-1,64])\n"
                                              "  c = Const() {value = tensor<f32[]>[7]} -> (f32[])\n"
                                              "  y = Add(x:0, c:0) -> (f32[-1,64])\n  out = NetOutput(y:0)\n}\n"),
                                    {{"ge.graph_key", options_.victim_graph_key}}, &id);
      // A hit can only be our own earlier compile under this key: the
      // answer below tells.
      if (o.status.ok()) {
        v1::RunGraphRequest run;
        run.set_session_id(id);
        run.set_graph_id(1);
        *run.add_inputs() = FloatValue(std::vector<float>(64, 1), {1, 64});
        v1::RunGraphResponse out;
        o.status = client_->RunGraph(run, &out);
        o.replies += out.SerializeAsString();
        if (o.status.ok()) {
          const v1::Tensor& t = out.outputs_size() == 1 ? out.outputs(0).tensor() : v1::Tensor::default_instance();
          float first = 0;
          if (t.raw_data().size() >= sizeof(float)) std::memcpy(&first, t.raw_data().data(), sizeof(float));
          if (t.raw_data().size() != 64 * sizeof(float) || first != 8.0f) {
            o.note = "the hijacker's run did not give its own model's answer (another tenant's model?)";
          }
        }
      }
      destroy(id);
      o.allowed = {StatusCode::OK};
      break;
    }
    default: o.allowed = {StatusCode::OK}; break;
  }
  return o;
}

}  // namespace ge::load
