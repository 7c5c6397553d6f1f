// Running graphs for the service: the unary RunGraph body, RunGraphStream's
// reactor (pipelined runs on one stream, replies in completion order,
// matched by request_id) and ExecuteOp (one op as a three-node graph).
#include <algorithm>
#include <chrono>
#include <cstring>
#include <deque>
#include <mutex>

#include "base/ir/proto_convert.h"
#include "google/protobuf/io/coded_stream.h"
#include "google/protobuf/io/zero_copy_stream_impl_lite.h"
#include "base/ops/op_registry.h"
#include "base/status.h"
#include "proto/value_convert.h"
#include "server/grpc_status.h"
#include "server/service.h"

namespace ge::server {
namespace {

using StreamReactor = grpc::ServerBidiReactor<v1::RunGraphRequest, v1::RunGraphResponse>;

// One RunGraphStream call. Reads one request at a time and queues each run
// on its session's device as soon as it arrives, so runs overlap; replies
// are written one at a time in completion order. Finish is called only when
// the client has half-closed (or gone) and every accepted run has replied,
// so no run outlives the reactor.
//
// Back-pressure: at most `window_` requests are read and not yet replied
// (running, queued, or with a reply waiting to be written). At the window
// the reactor stops reading; a reply written makes room and reading
// resumes. A client that sends without reading its replies is thus held by
// gRPC's flow control, never failed, and the daemon buffers at most a
// window of replies for it.
class RunStream final : public StreamReactor {
 public:
  RunStream(ServiceContext& ctx, grpc::CallbackServerContext* call)
      : ctx_(ctx), call_(call), begun_(BeginCall(ctx, *call)), start_(begun_.start_ns) {
    if (!begun_.tenant.ok()) {
      status_ = begun_.tenant.status();
      Finish(ToGrpcStatus(status_));
      return;
    }
    tenant_ = *begun_.tenant;
    window_ = static_cast<int>(std::max<int64_t>(1, std::min<int64_t>(tenant_->max_concurrent_runs, kMaxWindow)));
    reading_ = true;
    StartRead(&request_);
  }

  void OnReadDone(bool ok) override {
    if (!ok) {
      std::lock_guard<std::mutex> lock(mu_);
      reading_ = false;
      reads_done_ = true;
      MaybeFinishLocked();
      return;
    }
    {
      std::lock_guard<std::mutex> lock(mu_);
      ++pending_;
    }
    Dispatch(request_);
    std::lock_guard<std::mutex> lock(mu_);
    reading_ = false;
    MaybeReadLocked();
  }

  void OnWriteDone(bool /*ok*/) override {
    std::lock_guard<std::mutex> lock(mu_);
    replies_.pop_front();
    --pending_;
    if (!replies_.empty()) {
      StartWrite(&replies_.front());
    } else {
      writing_ = false;
      MaybeFinishLocked();
    }
    MaybeReadLocked();
  }

  void OnDone() override {
    FinishCall(ctx_, "RunGraphStream", start_, status_, tenant_);
    delete this;
  }

 private:
  void Dispatch(const v1::RunGraphRequest& request) {
    absl::StatusOr<std::shared_ptr<ManagedSession>> session = ctx_.sessions->Get(tenant_, request.session_id());
    if (!session.ok()) return Reply(request.request_id(), session.status(), {});
    if (absl::Status slot = TakeRunSlot(*tenant_); !slot.ok()) return Reply(request.request_id(), slot, {});
    std::shared_ptr<ManagedSession> s = *session;
    s->active_calls.fetch_add(1);
    Device& device = (*ctx_.devices)[s->device];
    const int64_t queued_at = SteadyNowNs();
    absl::Status submitted = SubmitForTenant(*tenant_, *device.queue, [this, s, request, &device, queued_at] {
      ctx_.metrics->queue_duration.WithLabels({device.name}).Observe((SteadyNowNs() - queued_at) * 1e-9);
      v1::RunGraphResponse response;
      absl::Status status = call_->IsCancelled() ? absl::CancelledError("the client cancelled the stream")
                                                 : ExecuteRun(ctx_, *s, request, &response, call_);
      ReleaseRunSlot(*tenant_);
      s->active_calls.fetch_sub(1);
      Reply(request.request_id(), status, std::move(response));
    });
    if (!submitted.ok()) {
      ReleaseRunSlot(*tenant_);
      s->active_calls.fetch_sub(1);
      Reply(request.request_id(), submitted, {});
    }
  }

  void Reply(uint64_t request_id, const absl::Status& status, v1::RunGraphResponse response) {
    response.set_request_id(request_id);
    if (!status.ok()) {
      response.clear_outputs();
      response.set_error_code(static_cast<int32_t>(status.code()));
      response.set_error_message(std::string(status.message()));
    }
    std::lock_guard<std::mutex> lock(mu_);
    replies_.push_back(std::move(response));
    if (!writing_) {
      writing_ = true;
      StartWrite(&replies_.front());
    }
  }

  // Reads the next request unless one is being read, the client is done,
  // or the window is full (request_ is free again once Dispatch copied it).
  void MaybeReadLocked() {
    if (reading_ || reads_done_ || finished_ || pending_ >= window_) return;
    reading_ = true;
    StartRead(&request_);
  }

  void MaybeFinishLocked() {
    if (reads_done_ && pending_ == 0 && !writing_ && !finished_) {
      finished_ = true;
      Finish(grpc::Status::OK);
    }
  }

  ServiceContext& ctx_;
  grpc::CallbackServerContext* call_;
  const CallStart begun_;
  const int64_t start_;
  Tenant* tenant_ = nullptr;
  absl::Status status_;
  v1::RunGraphRequest request_;
  std::mutex mu_;
  std::deque<v1::RunGraphResponse> replies_;  // front is being written
  static constexpr int64_t kMaxWindow = 64;
  int window_ = 1;   // the tenant's concurrent runs, at most kMaxWindow
  int pending_ = 0;  // requests read and not yet replied
  bool reading_ = false;  // a StartRead is outstanding
  bool writing_ = false;
  bool reads_done_ = false;
  bool finished_ = false;
};

// Data nodes for the inputs, the op, and a NetOutput of its outputs.
absl::StatusOr<v1::GraphDef> SingleOpGraph(const v1::ExecuteOpRequest& request, const std::vector<Value>& inputs) {
  const ops::OpSchema* schema = ops::OpRegistry::Global().Find(request.op_type());
  if (schema == nullptr) return NotFound("ExecuteOp: unknown op type '", request.op_type(), "'");
  const int num_outputs = request.num_outputs() > 0 ? request.num_outputs() : schema->min_outputs();
  v1::GraphDef graph;
  graph.set_name(StrCat("op_", request.op_type()));
  for (size_t i = 0; i < inputs.size(); ++i) {
    v1::NodeDef* node = graph.add_nodes();
    node->set_name(StrCat("input", i));
    node->set_type("Data");
    (*node->mutable_attrs())["index"].set_i(static_cast<int64_t>(i));
    if (!inputs[i].is_tensor()) return InvalidArgument("ExecuteOp: input ", i, " is not a tensor");
    ir::ValueType type = ir::ValueType::Tensor(inputs[i].tensor().dtype(), inputs[i].tensor().shape());
    ir::ValueTypeToProto(type, node->add_output_types());
  }
  v1::NodeDef* op = graph.add_nodes();
  op->set_name("op");
  op->set_type(request.op_type());
  *op->mutable_attrs() = request.attrs();
  for (size_t i = 0; i < inputs.size(); ++i) {
    v1::InputRef* ref = op->add_inputs();
    ref->set_node(StrCat("input", i));
    ref->set_port(0);
    *op->add_input_types() = graph.nodes(static_cast<int>(i)).output_types(0);
  }
  v1::NodeDef* out = graph.add_nodes();
  out->set_name("output");
  out->set_type("NetOutput");
  for (int i = 0; i < num_outputs; ++i) {
    v1::ValueTypeDef* type = op->add_output_types();
    type->mutable_tensor()->mutable_shape()->set_unknown_rank(true);
    *out->add_input_types() = *type;
    v1::InputRef* ref = out->add_inputs();
    ref->set_node("op");
    ref->set_port(i);
  }
  return graph;
}

// Ops whose result is not a function of their inputs and attributes, or
// that reach state: a cached single-op session would share it between calls
// (and tenants), so ExecuteOp refuses them.
absl::Status CheckStatelessOp(const std::string& op_type) {
  static const char* const kStateful[] = {"Variable",          "VariableV2",    "FileConstant",
                                          "RandomNormal",      "RandomUniform", "RandomNormalLike",
                                          "RandomUniformLike", "Bernoulli",     "Multinomial"};
  bool stateful = op_type.rfind("Assign", 0) == 0;
  for (const char* name : kStateful) stateful = stateful || op_type == name;
  if (const ops::OpSchema* schema = ops::OpRegistry::Global().Find(op_type)) stateful = stateful || schema->stateful;
  if (stateful) {
    return InvalidArgument("ExecuteOp: op type '", op_type,
                           "' is stateful (variables, files or random state); run it in a session graph instead");
  }
  return absl::OkStatus();
}

absl::Status RunSingleOp(ServiceContext& ctx, const Tenant& tenant, const v1::ExecuteOpRequest& request,
                         v1::ExecuteOpResponse* response) {
  GE_RETURN_IF_ERROR(CheckStatelessOp(request.op_type()));
  // Bounds before anything is built: outputs asked for, tensors sent.
  GE_RETURN_IF_ERROR(CheckOutputCount(request.num_outputs(), ctx.config->max_outputs, "ExecuteOp"));
  if (request.num_outputs() < 0) return InvalidArgument("ExecuteOp: num_outputs is ", request.num_outputs());
  GE_RETURN_IF_ERROR(CheckValueBounds(request.inputs(), ctx.config->max_tensor_bytes, "ExecuteOp"));
  std::vector<Value> inputs;
  for (int i = 0; i < request.inputs_size(); ++i) {
    GE_ASSIGN_OR_RETURN(Value v, rpc::ValueFromProto(request.inputs(i), StrCat("ExecuteOp input ", i)));
    inputs.push_back(std::move(v));
  }
  OptionMap options;
  for (const auto& [k, v] : request.options().entries()) options[k] = v;
  // Client input, checked as received (session/ingest.h): no file-system
  // reach through the op or its options.
  std::vector<std::string> attributes;
  for (const auto& [name, value] : request.attrs()) attributes.push_back(name);
  GE_RETURN_IF_ERROR(session::CheckClientOp(request.op_type(), attributes));
  GE_RETURN_IF_ERROR(session::CheckClientOptions(options, "ExecuteOp"));
  GE_ASSIGN_OR_RETURN(v1::GraphDef def, SingleOpGraph(request, inputs));
  GE_RETURN_IF_ERROR(ValidateOptions(options));
  // The key: the op's graph (type, attributes, input types) and the options,
  // both serialized deterministically (maps in key order).
  // Per tenant: the tenant's name leads the key, so no entry is shared
  // across tenants.
  std::string key = StrCat(tenant.name.size(), ":", tenant.name, ";");
  {
    google::protobuf::io::StringOutputStream stream(&key);
    google::protobuf::io::CodedOutputStream coded(&stream);
    coded.SetSerializationDeterministic(true);
    def.SerializeToCodedStream(&coded);
    for (const auto& [k, v] : options) {
      coded.WriteVarint64(k.size());
      coded.WriteString(k);
      coded.WriteVarint64(v.size());
      coded.WriteString(v);
    }
  }
  bool hit = false;
  GE_ASSIGN_OR_RETURN(std::shared_ptr<session::Session> session,
                      ctx.op_cache->GetOrCreate(
                          key,
                          [&]() -> absl::StatusOr<std::unique_ptr<session::Session>> {
                            GE_ASSIGN_OR_RETURN(std::unique_ptr<ir::Graph> graph, ir::GraphFromProto(def));
                            // The daemon's own session on device 0; its outputs are the
                            // calling tenant's memory (max_memory_bytes).
                            std::unique_ptr<session::Session> made =
                                ctx.runtime->NewSession(options, ctx.devices->front().index, session::CacheScope{});
                            made->set_memory_quota(tenant.memory, ctx.config->max_tensor_bytes);
                            GE_RETURN_IF_ERROR(made->AddGraph(0, std::move(graph)));
                            GE_RETURN_IF_ERROR(made->CompileGraph(0));
                            return made;
                          },
                          &hit));
  ctx.metrics->op_cache_lookups_total.WithLabels({hit ? "hit" : "miss"}).Increment();
  GE_ASSIGN_OR_RETURN(session::GraphInfo info, session->GetGraphInfo(0));
  for (size_t i = 0; i < info.outputs.size(); ++i) {
    GE_RETURN_IF_ERROR(
        CheckOutputTypeBound(info.outputs[i].type, ctx.config->max_tensor_bytes, StrCat("ExecuteOp: output ", i)));
  }
  GE_ASSIGN_OR_RETURN(std::vector<Value> outputs, session->RunGraph(0, std::move(inputs)));
  for (const Value& v : outputs) GE_RETURN_IF_ERROR(rpc::ValueToProto(v, response->add_outputs()));
  return absl::OkStatus();
}

// The deliberate leak of testing_retain_bytes_per_run: memory kept (and
// touched, so it is resident) for the daemon's life.
void RetainForTesting(const ServerConfig& config) {
  static std::mutex mu;
  static auto* retained = new std::vector<std::unique_ptr<char[]>>();
  const size_t n = static_cast<size_t>(config.testing_retain_bytes_per_run);
  auto block = std::make_unique<char[]>(n);
  std::memset(block.get(), 0x5a, n);
  std::lock_guard<std::mutex> lock(mu);
  retained->push_back(std::move(block));
}

constexpr char kSharedMemoryOff[] =
    "shared-memory I/O is off on this daemon (start ged with --shared-memory, or shared_memory: true)";

// Encodes output `index` into the region `ref` names when it is a numeric
// tensor that fits there, else into the message.
absl::Status EncodeOutput(ServiceContext& ctx, const std::string& tenant, const Value& value,
                          const v1::SharedMemoryRef* ref, const std::string& what, v1::Value* proto) {
  if (ref == nullptr || !value.is_tensor() || value.tensor().dtype() == DataType::kString ||
      ref->byte_size() < value.tensor().SizeInBytes()) {
    return rpc::ValueToProto(value, proto);
  }
  if (ctx.shared_memory == nullptr) return FailedPrecondition(what, ": ", kSharedMemoryOff);
  const Tensor& t = value.tensor();
  const size_t bytes = t.SizeInBytes();
  GE_RETURN_IF_ERROR(
      ctx.shared_memory->Write(tenant, ref->region(), ref->offset(), ref->byte_size(), t.raw_data(), bytes, what));
  v1::Tensor* out = proto->mutable_tensor();
  out->set_dtype(static_cast<v1::DataType>(t.dtype()));
  for (int64_t d : t.shape().dims()) out->add_dims(d);
  out->mutable_shared_memory()->set_region(ref->region());
  out->mutable_shared_memory()->set_offset(ref->offset());
  out->mutable_shared_memory()->set_byte_size(bytes);
  return absl::OkStatus();
}

}  // namespace

absl::Status RunSessionGraph(ServiceContext& ctx, ManagedSession& s, uint32_t graph_id, const std::string& where,
                             const std::string& model, const google::protobuf::RepeatedPtrField<v1::Value>& inputs,
                             const google::protobuf::Map<uint32_t, v1::SharedMemoryRef>& output_shared_memory,
                             google::protobuf::RepeatedPtrField<v1::Value>* outputs,
                             grpc::CallbackServerContext* call) {
  absl::StatusOr<session::GraphInfo> info = s.session->GetGraphInfo(graph_id);
  if (!info.ok()) return Annotate(info.status(), where);
  if (static_cast<size_t>(inputs.size()) != info->inputs.size()) {
    std::string names;
    for (const auto& io : info->inputs) StrAppend(&names, names.empty() ? "" : ", ", io.name);
    return InvalidArgument(where, ": expected ", info->inputs.size(), " inputs (", names, "), got ", inputs.size());
  }
  for (const auto& [index, ref] : output_shared_memory) {
    if (index >= info->outputs.size()) {
      return InvalidArgument(where, ": output_shared_memory names output ", index, ", but the graph has ",
                             info->outputs.size(), " outputs");
    }
  }
  if (ctx.config != nullptr) {
    // Before anything is decoded: no tensor in, and no static output out,
    // larger than max_tensor_bytes.
    GE_RETURN_IF_ERROR(CheckValueBounds(inputs, ctx.config->max_tensor_bytes, where));
    for (size_t i = 0; i < info->outputs.size(); ++i) {
      GE_RETURN_IF_ERROR(CheckOutputTypeBound(info->outputs[i].type, ctx.config->max_tensor_bytes,
                                              StrCat(where, ": output ", i, " (", info->outputs[i].name, ")")));
    }
  }
  const std::string tenant = s.tenant != nullptr ? s.tenant->name : "";
  const rpc::SharedMemoryResolver resolve = [&ctx, &tenant](const v1::SharedMemoryRef& ref, uint64_t bytes,
                                                            const std::string& what)
      -> absl::StatusOr<std::shared_ptr<Buffer>> {
    if (ctx.shared_memory == nullptr) return FailedPrecondition(what, ": ", kSharedMemoryOff);
    return ctx.shared_memory->Read(tenant, ref.region(), ref.offset(), ref.byte_size(), bytes, what);
  };
  std::vector<Value> values;
  values.reserve(info->inputs.size());
  for (int i = 0; i < inputs.size(); ++i) {
    GE_ASSIGN_OR_RETURN(Value v, rpc::ValueFromProto(inputs.Get(i),
                                                     StrCat(where, ": input ", i, " (", info->inputs[i].name, ")"),
                                                     &resolve));
    values.push_back(std::move(v));
  }
  runtime::RunControl control;
  if (call != nullptr) {
    // The call's deadline on the steady clock, and grpc's cancellation flag
    // (set when the client cancels, the deadline passes or the daemon stops).
    const auto left = call->deadline() - std::chrono::system_clock::now();
    if (left < std::chrono::hours(24 * 365)) {
      control.set_deadline(std::chrono::steady_clock::now() +
                           std::chrono::duration_cast<std::chrono::steady_clock::duration>(left));
    }
    control.set_cancelled([call] { return call->IsCancelled(); });
  }
  const int64_t start = SteadyNowNs();
  absl::StatusOr<std::vector<Value>> results =
      s.session->RunGraph(graph_id, std::move(values), call != nullptr ? &control : nullptr);
  if (!results.ok()) return Annotate(results.status(), where);
  // Labelled by tenant: a graph's name is the client's text (`model` names
  // the run in messages only).
  (void)model;
  ctx.metrics->run_duration.WithLabels({tenant}).Observe((SteadyNowNs() - start) * 1e-9);
  for (size_t i = 0; i < results->size(); ++i) {
    auto ref = output_shared_memory.find(static_cast<uint32_t>(i));
    const std::string what = StrCat(where, ": output ", i, i < info->outputs.size() ? " (" : "",
                                    i < info->outputs.size() ? info->outputs[i].name : "",
                                    i < info->outputs.size() ? ")" : "");
    GE_RETURN_IF_ERROR(EncodeOutput(ctx, tenant, (*results)[i],
                                    ref == output_shared_memory.end() ? nullptr : &ref->second, what,
                                    outputs->Add()));
  }
  return absl::OkStatus();
}

absl::Status ExecuteRun(ServiceContext& ctx, ManagedSession& s, const v1::RunGraphRequest& request,
                        v1::RunGraphResponse* response, grpc::CallbackServerContext* call) {
  const std::string where = StrCat("session ", s.id, " graph ", request.graph_id());
  std::string model;
  {
    std::lock_guard<std::mutex> lock(s.mu);
    auto it = s.graphs.find(request.graph_id());
    if (it == s.graphs.end()) return NotFound(where, " does not exist (AddGraph it first)");
    model = it->second;
  }
  GE_RETURN_IF_ERROR(
      RunSessionGraph(ctx, s, request.graph_id(), where, model, request.inputs(), request.output_shared_memory(),
                      response->mutable_outputs(), call));
  if (ctx.config != nullptr && ctx.config->testing_retain_bytes_per_run > 0) RetainForTesting(*ctx.config);
  response->set_request_id(request.request_id());
  return absl::OkStatus();
}

grpc::ServerBidiReactor<v1::RunGraphRequest, v1::RunGraphResponse>* GraphEngineService::RunGraphStream(
    grpc::CallbackServerContext* call) {
  return new RunStream(ctx_, call);
}

grpc::ServerUnaryReactor* GraphEngineService::ExecuteOp(grpc::CallbackServerContext* call,
                                                        const v1::ExecuteOpRequest* request,
                                                        v1::ExecuteOpResponse* response) {
  grpc::ServerUnaryReactor* reactor = call->DefaultReactor();
  ServiceContext& ctx = ctx_;
  const CallStart begun = BeginCall(ctx_, *call);
  const int64_t start = begun.start_ns;
  const Tenant* caller = begun.caller();
  auto finish = [&ctx, reactor, start, caller](const absl::Status& s) {
    FinishCall(ctx, "ExecuteOp", start, s, caller);
    reactor->Finish(ToGrpcStatus(s));
  };
  if (!begun.tenant.ok()) return finish(begun.tenant.status()), reactor;
  Tenant& t = **begun.tenant;
  absl::Status submitted = SubmitForTenant(t, *ctx_.devices->front().queue, [&ctx, &t, request, response, finish] {
    finish(RunSingleOp(ctx, t, *request, response));
  });
  if (!submitted.ok()) finish(submitted);
  return reactor;
}

}  // namespace ge::server
