// The KServe v2 protocol's transport-free logic (kserve_core.h).
#include "server/kserve_core.h"

#include "base/status.h"
#include "base/version.h"
#include "server/bounds.h"
#include "server/grpc_status.h"
#include "server/serving/model_config.h"

namespace ge::server {
namespace {

using serving::ModelRepository;
using serving::ServedModel;

absl::Status CheckAdmin(const Tenant& tenant, std::string_view what) {
  if (tenant.admin) return absl::OkStatus();
  return PermissionDenied(what, " is for operators: tenant ", tenant.name, " is not admin (tenants[].admin)");
}

absl::Status NoRepository(std::string_view name) {
  GE_RETURN_IF_ERROR(ModelRepository::CheckModelName(name));
  return NotFound("unknown model '", name, "' (ged serves no model repository: --model-repository)");
}

void FillMetadata(const ServedModel& m, const std::vector<std::shared_ptr<ServedModel>>& versions,
                  inference::ModelMetadataResponse* response) {
  const inference::ModelConfig& c = m.config();
  response->set_name(c.name());
  for (const auto& v : versions) response->add_versions(std::to_string(v->version()));
  response->set_platform(c.platform());
  auto fill = [&](auto* t, const std::string& name, inference::DataType type, const auto& dims) {
    t->set_name(name);
    const std::optional<DataType> dtype = serving::FromConfigType(type);
    t->set_datatype(std::string(dtype ? serving::KServeDatatype(*dtype) : "INVALID"));
    if (c.max_batch_size() > 0) t->add_shape(-1);
    for (int64_t d : dims) t->add_shape(d);
  };
  for (const auto& in : c.input()) fill(response->add_inputs(), in.name(), in.data_type(), in.dims());
  for (const auto& out : c.output()) fill(response->add_outputs(), out.name(), out.data_type(), out.dims());
}

void FillStats(const ServedModel& m, inference::ModelStatistics* s) {
  const serving::ModelStats stats = m.stats();
  s->set_name(m.name());
  s->set_version(std::to_string(m.version()));
  s->set_last_inference(stats.last_inference_ms);
  s->set_inference_count(stats.inference_count);
  s->set_execution_count(stats.execution_count);
  auto put = [](inference::StatisticDuration* d, const serving::ModelStats::Duration& from) {
    d->set_count(from.count);
    d->set_ns(from.ns);
  };
  put(s->mutable_inference_stats()->mutable_success(), stats.success);
  put(s->mutable_inference_stats()->mutable_fail(), stats.fail);
  put(s->mutable_inference_stats()->mutable_queue(), stats.queue);
  put(s->mutable_inference_stats()->mutable_compute_infer(), stats.compute_infer);
  for (const auto& [rows, d] : stats.batches) {
    auto* b = s->add_batch_stats();
    b->set_batch_size(rows);
    put(b->mutable_compute_infer(), d);
  }
}

}  // namespace

absl::StatusOr<std::shared_ptr<ServedModel>> FindForTenant(const ModelRepository& repository, const Tenant& tenant,
                                                           std::string_view name, std::string_view version) {
  GE_RETURN_IF_ERROR(ModelRepository::CheckModelName(name));
  if (!tenant.MayUseModel(name)) return NotFound("unknown model '", name, "'");
  return repository.Find(name, version);
}

void KServeCore::ServerMetadata(inference::ServerMetadataResponse* response) const {
  response->set_name("ged");
  response->set_version(GED_VERSION_STRING);
  for (const char* e : {"model_repository", "model_configuration", "statistics", "binary_tensor_data"}) {
    response->add_extensions(e);
  }
}

bool KServeCore::ServerReady() const {
  return !ctx_.draining.load() && (repository_ == nullptr || repository_->Ready());
}

absl::StatusOr<bool> KServeCore::ModelReady(const Tenant& tenant, std::string_view name,
                                            std::string_view version) const {
  if (repository_ == nullptr) return NoRepository(name);
  absl::StatusOr<std::shared_ptr<ServedModel>> m = FindForTenant(*repository_, tenant, name, version);
  if (!m.ok() && m.status().code() != absl::StatusCode::kUnavailable) return m.status();
  return m.ok();
}

absl::Status KServeCore::ModelMetadata(const Tenant& tenant, std::string_view name, std::string_view version,
                                       inference::ModelMetadataResponse* response) const {
  if (repository_ == nullptr) return NoRepository(name);
  GE_ASSIGN_OR_RETURN(std::shared_ptr<ServedModel> m, FindForTenant(*repository_, tenant, name, version));
  FillMetadata(*m, repository_->Versions(name), response);
  return absl::OkStatus();
}

absl::Status KServeCore::ModelConfig(const Tenant& tenant, std::string_view name, std::string_view version,
                                     inference::ModelConfigResponse* response) const {
  if (repository_ == nullptr) return NoRepository(name);
  GE_ASSIGN_OR_RETURN(std::shared_ptr<ServedModel> m, FindForTenant(*repository_, tenant, name, version));
  *response->mutable_config() = m->config();
  return absl::OkStatus();
}

absl::Status KServeCore::ModelStatistics(const Tenant& tenant, std::string_view name, std::string_view version,
                                         inference::ModelStatisticsResponse* response) const {
  if (repository_ == nullptr) return name.empty() ? absl::OkStatus() : NoRepository(name);
  if (name.empty()) {
    for (const auto& m : repository_->All()) {
      if (tenant.MayUseModel(m->name())) FillStats(*m, response->add_model_stats());
    }
    return absl::OkStatus();
  }
  GE_ASSIGN_OR_RETURN(std::shared_ptr<ServedModel> m, FindForTenant(*repository_, tenant, name, version));
  if (!version.empty()) {
    FillStats(*m, response->add_model_stats());
    return absl::OkStatus();
  }
  for (const auto& v : repository_->Versions(name)) FillStats(*v, response->add_model_stats());
  return absl::OkStatus();
}

void KServeCore::RepositoryIndex(const Tenant& tenant, bool ready_only,
                                 inference::RepositoryIndexResponse* response) const {
  if (repository_ == nullptr) return;
  for (const serving::IndexEntry& e : repository_->Index(ready_only)) {
    if (!tenant.MayUseModel(e.name)) continue;
    auto* m = response->add_models();
    m->set_name(e.name);
    m->set_version(e.version);
    m->set_state(e.state);
    m->set_reason(e.reason);
  }
}

void KServeCore::Control(Tenant& tenant, const char* rpc, const std::string& name,
                         const std::vector<std::string>& parameter_keys, bool load,
                         std::function<void(absl::Status)> done) {
  absl::Status status = CheckAdmin(tenant, rpc);
  if (status.ok()) status = ModelRepository::CheckModelName(name);
  for (const std::string& key : parameter_keys) {
    if (!status.ok()) break;
    if (key == "config" || key.rfind("file:", 0) == 0) {
      status = PermissionDenied(rpc, ": parameter '", key.substr(0, 64),
                                "' is refused: ged loads models from its repository directory only");
    }
  }
  if (status.ok() && repository_ == nullptr) status = NoRepository(name);
  if (!status.ok()) return done(status);
  serving::ModelRepository* repo = repository_;
  absl::Status submitted = SubmitForTenant(tenant, *ctx_.devices->front().queue, [repo, name, load, done] {
    done(load ? repo->RequestLoad(name) : repo->RequestUnload(name));
  });
  if (!submitted.ok()) done(submitted);
}

absl::Status KServeCore::CheckInferTarget(const Tenant& tenant, std::string_view name, std::string_view version) const {
  if (repository_ == nullptr) return NoRepository(name);
  return FindForTenant(*repository_, tenant, name, version).status();
}

void KServeCore::Infer(Tenant& tenant, serving::InferRequest request, serving::InferDone done) {
  if (absl::Status slot = TakeRunSlot(tenant); !slot.ok()) return done(slot);
  Tenant* t = &tenant;
  auto release = [t, done = std::move(done)](absl::StatusOr<serving::InferResult> r) {
    ReleaseRunSlot(*t);
    done(std::move(r));
  };
  absl::Status checked = CheckInferTarget(tenant, request.model, request.version);
  if (!checked.ok()) return release(checked);
  request.memory = tenant.memory;
  repository_->Infer(std::move(request), std::move(release));
}

}  // namespace ge::server
