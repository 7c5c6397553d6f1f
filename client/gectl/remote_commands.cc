// gectl's daemon commands: `run --remote` (same outputs and exit codes as a
// local run), `session ls|create|destroy`, `status` and `health`, all on
// the C++ client library. gRPC codes become exit codes through
// ExitCodeFor (the codes are absl's numbering too).
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <iomanip>
#include <iostream>
#include <sstream>

#include "base/io/npy.h"
#include "base/ir/proto_convert.h"
#include "base/status.h"
#include "client/cpp/client.h"
#include "proto/value_convert.h"
#include "client/gectl/commands.h"
#include "client/gectl/local_runtime.h"
#include "client/gectl/model_inputs.h"
#include "client/gectl/remote_client.h"
#include "session/tools.h"

namespace ge::gectl {
namespace {

client::Client MakeClient(const RemoteFlags& remote) { return client::Client(ClientOptionsFor(remote)); }

absl::StatusOr<session::GraphInfo> InfoFromProto(const v1::AddGraphResponse& response) {
  session::GraphInfo info;
  for (const auto& io : response.inputs()) {
    GE_ASSIGN_OR_RETURN(ir::ValueType type, ir::ValueTypeFromProto(io.type()));
    info.inputs.push_back({io.name(), type});
  }
  for (const auto& io : response.outputs()) {
    GE_ASSIGN_OR_RETURN(ir::ValueType type, ir::ValueTypeFromProto(io.type()));
    info.outputs.push_back({io.name(), type});
  }
  return info;
}

// Prints or saves a run's outputs, named after `info`.
absl::Status ReportOutputs(const RunFlags& flags, const session::GraphInfo& info,
                           const google::protobuf::RepeatedPtrField<v1::Value>& values) {
  std::vector<Value> outputs;
  std::vector<std::string> names;
  for (int i = 0; i < values.size(); ++i) {
    names.push_back(i < static_cast<int>(info.outputs.size()) ? info.outputs[i].name : StrCat("output", i));
    GE_ASSIGN_OR_RETURN(Value v, rpc::ValueFromProto(values.Get(i), StrCat("output ", names.back())));
    outputs.push_back(std::move(v));
  }
  if (!flags.output_dir.empty()) return SaveOutputs(flags.output_dir, names, outputs);
  for (size_t i = 0; i < outputs.size(); ++i) PrintOutputSummary(names[i], outputs[i]);
  return absl::OkStatus();
}

// A compiled .gem: LoadModel with its bytes (weights inline), then
// ExecuteModel, as GE's offline model flow.
absl::Status RunGemOnSession(client::Client& c, const std::string& session_id, const RunFlags& flags,
                             const InputSpec& spec) {
  std::ifstream in(flags.model, std::ios::binary);
  std::ostringstream bytes;
  bytes << in.rdbuf();
  if (!in) return NotFound("cannot read compiled model ", flags.model);
  v1::LoadModelRequest load;
  load.set_session_id(session_id);
  load.set_gem(bytes.str());
  v1::LoadModelResponse loaded;
  GE_RETURN_IF_ERROR(FromGrpc(c.LoadModel(load, &loaded), c.address()));
  v1::AddGraphResponse typed;
  *typed.mutable_inputs() = loaded.inputs();
  *typed.mutable_outputs() = loaded.outputs();
  GE_ASSIGN_OR_RETURN(session::GraphInfo info, InfoFromProto(typed));
  GE_ASSIGN_OR_RETURN(std::vector<Value> inputs, MakeInputs(info, spec));
  v1::ExecuteModelRequest request;
  request.set_session_id(session_id);
  request.set_model_id(loaded.model_id());
  for (const Value& v : inputs) GE_RETURN_IF_ERROR(rpc::ValueToProto(v, request.add_inputs()));
  v1::ExecuteModelResponse response;
  GE_RETURN_IF_ERROR(FromGrpc(c.ExecuteModel(request, &response), c.address()));
  return ReportOutputs(flags, info, response.outputs());
}

absl::Status RunOnSession(client::Client& c, const std::string& session_id, const RunFlags& flags) {
  std::map<std::string, std::string> options;
  for (const std::string& f : flags.options) {
    const size_t eq = f.find('=');
    if (eq == std::string::npos) return InvalidArgument("bad --option '", f, "': expected KEY=VALUE");
    options[f.substr(0, eq)] = f.substr(eq + 1);
  }
  InputSpec spec;
  spec.seed = flags.seed;
  for (const std::string& f : flags.inputs) GE_RETURN_IF_ERROR(ParseInputFlag(f, spec));
  for (const std::string& f : flags.shapes) GE_RETURN_IF_ERROR(ParseShapeFlag(f, spec));
  std::error_code ec;
  if (!std::filesystem::exists(flags.model, ec)) return NotFound("model file ", flags.model, " does not exist");
  if (session::IsCompiledModelPath(flags.model)) {
    if (!options.empty()) return InvalidArgument("--option does not apply to a compiled model (.gem)");
    return RunGemOnSession(c, session_id, flags, spec);
  }
  v1::AddGraphResponse added;
  GE_RETURN_IF_ERROR(FromGrpc(c.AddOnnxFile(session_id, 0, flags.model, options, &added), c.address()));
  v1::CompileGraphResponse compiled;
  GE_RETURN_IF_ERROR(FromGrpc(c.CompileGraph(session_id, 0, &compiled), c.address()));
  v1::AddGraphResponse typed;  // the compiled graph's (inferred) input and output types
  *typed.mutable_inputs() = compiled.inputs();
  *typed.mutable_outputs() = compiled.outputs();
  GE_ASSIGN_OR_RETURN(session::GraphInfo info, InfoFromProto(typed));
  GE_ASSIGN_OR_RETURN(std::vector<Value> inputs, MakeInputs(info, spec));
  v1::RunGraphRequest request;
  request.set_session_id(session_id);
  for (const Value& v : inputs) GE_RETURN_IF_ERROR(rpc::ValueToProto(v, request.add_inputs()));
  v1::RunGraphResponse response;
  GE_RETURN_IF_ERROR(FromGrpc(c.RunGraph(request, &response), c.address()));
  return ReportOutputs(flags, info, response.outputs());
}

absl::Status RemoteRun(const RunFlags& flags, const RemoteFlags& remote) {
  client::Client c = MakeClient(remote);
  std::string session_id;
  GE_RETURN_IF_ERROR(FromGrpc(c.CreateSession({}, &session_id), c.address()));
  absl::Status status = RunOnSession(c, session_id, flags);
  (void)c.DestroySession(session_id);  // best effort: idle expiry collects it otherwise
  return status;
}

absl::Status Session(const SessionFlags& flags, const RemoteFlags& remote) {
  client::Client c = MakeClient(remote);
  if (flags.action == "create") {
    std::map<std::string, std::string> options;
    for (const std::string& f : flags.options) {
      const size_t eq = f.find('=');
      if (eq == std::string::npos) return InvalidArgument("bad --option '", f, "': expected KEY=VALUE");
      options[f.substr(0, eq)] = f.substr(eq + 1);
    }
    std::string id;
    GE_RETURN_IF_ERROR(FromGrpc(c.CreateSession(options, &id), c.address()));
    std::cout << id << "\n";
    return absl::OkStatus();
  }
  if (flags.action == "destroy") {
    if (flags.session_id.empty()) return InvalidArgument("gectl session destroy needs a session id");
    return FromGrpc(c.DestroySession(flags.session_id), c.address());
  }
  if (flags.action == "ls") {
    v1::ListSessionsResponse response;
    GE_RETURN_IF_ERROR(FromGrpc(c.ListSessions(&response), c.address()));
    for (const auto& s : response.sessions()) {
      std::cout << s.session_id() << "  tenant=" << s.tenant() << "  graphs=" << s.graph_ids_size() << "  idle="
                << std::fixed << std::setprecision(1) << s.idle_seconds() << "s\n";
    }
    return absl::OkStatus();
  }
  return InvalidArgument("unknown session action '", flags.action, "': expected ls, create or destroy");
}

absl::Status Status(const RemoteFlags& remote) {
  client::Client c = MakeClient(remote);
  v1::GetStatusResponse r;
  GE_RETURN_IF_ERROR(FromGrpc(c.GetStatus(&r), c.address()));
  std::cout << "ged " << r.version() << " at " << c.address() << (r.draining() ? " (draining)" : "") << "\n"
            << "uptime: " << std::fixed << std::setprecision(1) << r.uptime_seconds() << " s\n"
            << "sessions: " << r.sessions() << "\n";
  for (const auto& d : r.devices()) {
    std::cout << "device " << d.name() << ": threads=" << d.threads() << " running=" << d.running()
              << " queued=" << d.queued() << "/" << d.queue_capacity() << "\n";
  }
  std::cout << "engines:";
  for (const auto& e : r.engines()) std::cout << " " << e;
  std::cout << "\n";
  return absl::OkStatus();
}

}  // namespace

// `compile --remote`: the daemon compiles (through its cache) and sends the
// .gem back, written to flags.output through a temporary file and a rename.
absl::Status RemoteCompile(const CompileFlags& flags, const RemoteFlags& remote) {
  if (!session::IsCompiledModelPath(flags.output))
    return InvalidArgument("-o ", flags.output, ": the output must end in .gem");
  if (flags.external_weights || flags.external_weight > 0 || flags.threads != 0) {
    return InvalidArgument("--external-weights, --external-weight and --threads apply to local compiles only "
                           "(the daemon's device decides threads; its .gem keeps weights inline)");
  }
  GE_ASSIGN_OR_RETURN(OptionMap options, ParseOptionFlags(flags.options));
  std::error_code ec;
  if (!std::filesystem::exists(flags.model, ec)) return NotFound("model file ", flags.model, " does not exist");
  client::Client c = MakeClient(remote);
  std::string session_id;
  GE_RETURN_IF_ERROR(FromGrpc(c.CreateSession({}, &session_id), c.address()));
  const auto compile = [&]() -> absl::Status {
    v1::AddGraphResponse added;
    GE_RETURN_IF_ERROR(FromGrpc(
        c.AddOnnxFile(session_id, 0, flags.model, std::map<std::string, std::string>(options.begin(), options.end()),
                      &added),
        c.address()));
    v1::CompileGraphRequest request;
    request.set_session_id(session_id);
    request.set_graph_id(0);
    request.set_return_model(true);
    v1::CompileGraphResponse compiled;
    GE_RETURN_IF_ERROR(FromGrpc(c.CompileGraph(request, &compiled), c.address()));
    const std::string temporary = flags.output + ".tmp-" + std::to_string(getpid());
    {
      std::ofstream out(temporary, std::ios::binary | std::ios::trunc);
      out.write(compiled.model().data(), static_cast<std::streamsize>(compiled.model().size()));
      out.close();
      if (!out) {
        std::filesystem::remove(temporary, ec);
        return FailedPrecondition("cannot write ", flags.output);
      }
    }
    std::filesystem::rename(temporary, flags.output, ec);
    if (ec) return FailedPrecondition("cannot write ", flags.output, ": ", ec.message());
    std::cout << flags.output << ": compiled by the daemon at " << c.address() << ", "
              << compiled.summary().node_count() << " nodes, " << compiled.model().size() << " bytes" << std::endl;
    if (!compiled.cache_key().empty()) {
      std::cout << "cache: " << (compiled.cache_hit() ? "hit " : "miss ") << compiled.cache_key() << std::endl;
    }
    return absl::OkStatus();
  };
  absl::Status s = compile();
  (void)c.DestroySession(session_id);  // best effort: idle expiry collects it otherwise
  return s;
}

int RemoteCompileCommand(const CompileFlags& flags, const RemoteFlags& remote) {
  absl::Status s = RemoteCompile(flags, remote);
  return s.ok() ? 0 : ReportError(s);
}

int RemoteRunCommand(const RunFlags& flags, const RemoteFlags& remote) {
  absl::Status s = RemoteRun(flags, remote);
  return s.ok() ? 0 : ReportError(s);
}

int SessionCommand(const SessionFlags& flags, const RemoteFlags& remote) {
  absl::Status s = Session(flags, remote);
  return s.ok() ? 0 : ReportError(s);
}

int StatusCommand(const RemoteFlags& remote) {
  absl::Status s = Status(remote);
  return s.ok() ? 0 : ReportError(s);
}

int HealthCommand(const RemoteFlags& remote, const std::string& service) {
  client::Client c = MakeClient(remote);
  grpc::health::v1::HealthCheckResponse response;
  absl::Status s = FromGrpc(c.CheckHealth(service, &response), c.address());
  if (!s.ok()) return ReportError(s);
  std::cout << grpc::health::v1::HealthCheckResponse::ServingStatus_Name(response.status()) << "\n";
  return response.status() == grpc::health::v1::HealthCheckResponse::SERVING ? 0 : 1;
}

}  // namespace ge::gectl
