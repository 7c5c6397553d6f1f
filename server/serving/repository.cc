// The model repository: scanning, loading, unloading, polling, the index
// and readiness (repository.h).
#include "server/serving/repository.h"

#include <algorithm>
#include <atomic>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

#include "base/logging.h"
#include "base/status.h"
#include "base/strings.h"
#include "server/serving/model_config.h"

namespace ge::server::serving {
namespace fs = std::filesystem;
namespace {

template <typename... Args>
absl::Status Unavailable(const Args&... args) {
  return absl::UnavailableError(StrCat(args...));
}

bool AllDigits(std::string_view s) {
  return !s.empty() && s.size() <= 18 && std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; });
}

}  // namespace

absl::StatusOr<ControlMode> ParseControlMode(std::string_view text) {
  if (text == "none") return ControlMode::kNone;
  if (text == "explicit") return ControlMode::kExplicit;
  if (text == "poll") return ControlMode::kPoll;
  return InvalidArgument("model_control_mode must be none, explicit or poll, not '", text, "'");
}

absl::Status ModelRepository::CheckModelName(std::string_view name) {
  if (name.empty()) return InvalidArgument("the model name is empty");
  if (name.size() > 255) return InvalidArgument("a model name has at most 255 characters");
  if (name.find('/') != std::string_view::npos || name.find('\\') != std::string_view::npos ||
      name.find("..") != std::string_view::npos || name == ".") {
    return InvalidArgument("model name '", name, "' may not contain '/' or '..'");
  }
  for (char c : name) {
    if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) {
      return InvalidArgument("a model name may not contain control characters");
    }
  }
  return absl::OkStatus();
}

absl::StatusOr<std::unique_ptr<ModelRepository>> ModelRepository::Open(const session::Runtime& runtime,
                                                                       RepositoryOptions options) {
  std::error_code ec;
  if (!fs::is_directory(options.dir, ec)) {
    return NotFound("model_repository ", options.dir, " is not a directory");
  }
  for (const std::string& name : options.startup_models) GE_RETURN_IF_ERROR(CheckModelName(name));
  return std::unique_ptr<ModelRepository>(new ModelRepository(runtime, std::move(options)));
}

ModelRepository::~ModelRepository() { Shutdown(); }

std::vector<std::string> ModelRepository::Scan() const {
  std::vector<std::string> names;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(options_.dir, ec)) {
    const std::string name = e.path().filename().string();
    if (!e.is_directory(ec) || name.empty() || name[0] == '.' || !CheckModelName(name).ok()) continue;
    names.push_back(name);
  }
  std::sort(names.begin(), names.end());
  return names;
}

std::string ModelRepository::Signature(const std::string& name) const {
  std::vector<std::string> rows;
  std::error_code ec;
  for (auto it = fs::recursive_directory_iterator(fs::path(options_.dir) / name, ec);
       !ec && it != fs::recursive_directory_iterator(); it.increment(ec)) {
    std::error_code e2;
    if (!it->is_regular_file(e2)) continue;
    const auto mtime = fs::last_write_time(it->path(), e2).time_since_epoch().count();
    rows.push_back(StrCat(it->path().string(), " ", it->file_size(e2), " ", mtime));
  }
  std::sort(rows.begin(), rows.end());
  std::string out;
  for (const std::string& r : rows) StrAppend(&out, r, "\n");
  return out;
}

absl::StatusOr<std::map<int64_t, std::shared_ptr<ServedModel>>> ModelRepository::LoadVersions(
    const std::string& name) const {
  const fs::path dir = fs::path(options_.dir) / name;
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) return NotFound("no model '", name, "' in the repository ", options_.dir);
  ParsedModelConfig parsed;
  const fs::path config_file = dir / "config.pbtxt";
  if (fs::exists(config_file, ec)) {
    std::ifstream in(config_file);
    std::stringstream text;
    text << in.rdbuf();
    if (!in) return InvalidArgument(config_file.string(), ": cannot read it");
    GE_ASSIGN_OR_RETURN(parsed, ParseModelConfig(text.str(), config_file.string()));
    for (const std::string& w : parsed.warnings) Logger("server").warn("{}", w);
  }
  GE_RETURN_IF_ERROR(CheckModelConfig(parsed.config, name, config_file.string()));
  std::vector<int64_t> found;
  for (const auto& e : fs::directory_iterator(dir, ec)) {
    const std::string v = e.path().filename().string();
    if (e.is_directory(ec) && AllDigits(v)) found.push_back(std::stoll(v));
  }
  std::sort(found.begin(), found.end());
  std::vector<int64_t> pick;
  const auto& policy = parsed.config.version_policy();
  if (policy.has_all()) {
    pick = found;
  } else if (policy.has_specific()) {
    for (int64_t v : policy.specific().versions()) {
      if (std::find(found.begin(), found.end(), v) == found.end()) {
        return NotFound("model ", name, ": version_policy names version ", v, ", which has no directory");
      }
      pick.push_back(v);
    }
  } else {
    const size_t n = policy.has_latest() && policy.latest().num_versions() > 0 ? policy.latest().num_versions() : 1;
    pick.assign(found.end() - std::min(n, found.size()), found.end());
  }
  if (pick.empty()) {
    return FailedPrecondition("model ", name, ": no version directory (", dir.string(), "/1/model.onnx, ...)");
  }
  std::map<int64_t, std::shared_ptr<ServedModel>> versions;
  for (int64_t v : pick) {
    GE_ASSIGN_OR_RETURN(
        versions[v], ServedModel::Load(runtime_, parsed.config, (dir / std::to_string(v)).string(), v, options_.load));
  }
  return versions;
}

absl::Status ModelRepository::Load(const std::string& name) {
  GE_RETURN_IF_ERROR(CheckModelName(name));
  {
    std::lock_guard<std::mutex> lock(mu_);
    Entry& e = models_[name];
    if (e.busy) return Unavailable("model '", name, "' is being loaded or unloaded; retry");
    e.busy = true;
    e.wanted = true;
    if (e.versions.empty()) e.state = "LOADING";
  }
  const std::string signature = Signature(name);
  absl::StatusOr<std::map<int64_t, std::shared_ptr<ServedModel>>> loaded = LoadVersions(name);
  std::vector<std::shared_ptr<ServedModel>> old;
  {
    std::lock_guard<std::mutex> lock(mu_);
    Entry& e = models_[name];
    e.busy = false;
    e.signature = signature;
    if (loaded.ok()) {
      for (auto& [v, m] : e.versions) old.push_back(m);
      e.versions = *std::move(loaded);
      e.state = "READY";
      e.reason.clear();
    } else {
      e.reason = std::string(loaded.status().message());
      // A failed reload leaves the versions that served before serving.
      e.state = e.versions.empty() ? "UNAVAILABLE" : "READY";
    }
  }
  for (auto& m : old) m->Stop();  // the queued requests finish on the old versions
  {
    std::lock_guard<std::mutex> lock(mu_);
    for (auto& m : old) retired_.push_back(std::move(m));
  }
  if (!loaded.ok()) {
    Logger("server").error("model {} failed to load: {}", name, loaded.status().message());
    return loaded.status();
  }
  return absl::OkStatus();
}

absl::Status ModelRepository::Unload(const std::string& name) {
  GE_RETURN_IF_ERROR(CheckModelName(name));
  std::vector<std::shared_ptr<ServedModel>> old;
  {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = models_.find(name);
    std::error_code ec;
    if (it == models_.end() && !fs::is_directory(fs::path(options_.dir) / name, ec)) {
      return NotFound("no model '", name, "' in the repository");
    }
    Entry& e = models_[name];
    if (e.busy) return Unavailable("model '", name, "' is being loaded or unloaded; retry");
    e.busy = true;
    e.wanted = false;
    for (auto& [v, m] : e.versions) old.push_back(m);
    e.state = old.empty() ? "UNAVAILABLE" : "UNLOADING";
  }
  for (auto& m : old) m->Stop();  // new requests: UNAVAILABLE; queued ones finish
  std::lock_guard<std::mutex> lock(mu_);
  Entry& e = models_[name];
  e.busy = false;
  e.versions.clear();
  e.state = "UNAVAILABLE";
  e.reason = "unloaded";
  for (auto& m : old) retired_.push_back(std::move(m));
  Logger("server").info("model {} unloaded", name);
  return absl::OkStatus();
}

absl::Status ModelRepository::RequestLoad(const std::string& name) {
  if (options_.mode == ControlMode::kNone) {
    return FailedPrecondition("model_control_mode is none: models cannot be loaded or unloaded at run time ",
                              "(start ged with --model-control-mode explicit)");
  }
  return Load(name);
}

absl::Status ModelRepository::RequestUnload(const std::string& name) {
  if (options_.mode == ControlMode::kNone) {
    return FailedPrecondition("model_control_mode is none: models cannot be loaded or unloaded at run time ",
                              "(start ged with --model-control-mode explicit)");
  }
  return Unload(name);
}

void ModelRepository::LoadStartupModels() {
  const std::vector<std::string> names = options_.mode == ControlMode::kExplicit ? options_.startup_models : Scan();
  std::atomic<size_t> next{0};
  auto worker = [&] {
    for (size_t i = next++; i < names.size(); i = next++) (void)Load(names[i]);
  };
  const int threads = std::max(1, std::min<int>(options_.load_threads, static_cast<int>(names.size())));
  std::vector<std::thread> pool;
  for (int t = 1; t < threads; ++t) pool.emplace_back(worker);
  worker();
  for (std::thread& t : pool) t.join();
  std::lock_guard<std::mutex> lock(mu_);
  startup_done_ = true;
}

void ModelRepository::Poll() {
  if (options_.mode != ControlMode::kPoll) return;
  const std::vector<std::string> names = Scan();
  for (const std::string& name : names) {
    std::string known;
    {
      std::lock_guard<std::mutex> lock(mu_);
      auto it = models_.find(name);
      if (it != models_.end()) known = it->second.signature;
    }
    if (Signature(name) != known) {
      Logger("server").info("model {} changed on disk: reloading", name);
      (void)Load(name);
    }
  }
  std::vector<std::string> gone;
  {
    std::lock_guard<std::mutex> lock(mu_);
    for (const auto& [name, e] : models_) {
      if (!std::binary_search(names.begin(), names.end(), name) && !e.versions.empty()) gone.push_back(name);
    }
  }
  for (const std::string& name : gone) (void)Unload(name);
  Reap();
}

void ModelRepository::Reap() {
  std::vector<std::shared_ptr<ServedModel>> done;
  {
    std::lock_guard<std::mutex> lock(mu_);
    for (auto it = retired_.begin(); it != retired_.end();) {
      if (it->use_count() == 1 && (*it)->pending() == 0) {
        done.push_back(std::move(*it));
        it = retired_.erase(it);
      } else {
        ++it;
      }
    }
  }
  done.clear();  // destroyed outside the lock (joins their workers)
}

void ModelRepository::Shutdown() {
  std::vector<std::shared_ptr<ServedModel>> all;
  {
    std::lock_guard<std::mutex> lock(mu_);
    for (auto& [name, e] : models_) {
      for (auto& [v, m] : e.versions) all.push_back(std::move(m));
      e.versions.clear();
      e.state = "UNAVAILABLE";
    }
    for (auto& m : retired_) all.push_back(std::move(m));
    retired_.clear();
  }
  for (auto& m : all) m->Stop();
}

std::vector<IndexEntry> ModelRepository::Index(bool ready_only) const {
  const std::vector<std::string> names = Scan();
  std::vector<IndexEntry> out;
  std::lock_guard<std::mutex> lock(mu_);
  std::vector<std::string> all = names;
  for (const auto& [name, e] : models_) {
    if (!std::binary_search(names.begin(), names.end(), name)) all.push_back(name);
  }
  for (const std::string& name : all) {
    auto it = models_.find(name);
    if (it == models_.end()) {
      if (!ready_only) out.push_back({name, "", "UNAVAILABLE", "not loaded"});
      continue;
    }
    const Entry& e = it->second;
    if (e.versions.empty()) {
      if (!ready_only) out.push_back({name, "", e.state, e.reason});
      continue;
    }
    for (const auto& [v, m] : e.versions) {
      if (ready_only && e.state != "READY") continue;
      out.push_back({name, std::to_string(v), e.state, e.reason});
    }
  }
  return out;
}

bool ModelRepository::Ready() const {
  std::lock_guard<std::mutex> lock(mu_);
  if (!startup_done_) return false;
  for (const auto& [name, e] : models_) {
    if (e.wanted && (e.state != "READY" || e.versions.empty())) return false;
  }
  return true;
}

absl::StatusOr<std::shared_ptr<ServedModel>> ModelRepository::Find(std::string_view name,
                                                                   std::string_view version) const {
  GE_RETURN_IF_ERROR(CheckModelName(name));
  std::lock_guard<std::mutex> lock(mu_);
  auto it = models_.find(std::string(name));
  if (it == models_.end() || it->second.versions.empty()) {
    std::error_code ec;
    const bool exists = it != models_.end() || fs::is_directory(fs::path(options_.dir) / std::string(name), ec);
    if (!exists) return NotFound("unknown model '", name, "'");
    const std::string reason = it != models_.end() && !it->second.reason.empty() ? it->second.reason : "not loaded";
    return Unavailable("model '", name, "' is not ready: ", reason);
  }
  const Entry& e = it->second;
  if (e.state == "UNLOADING") return Unavailable("model '", name, "' is unloading");
  if (version.empty()) return e.versions.rbegin()->second;
  if (!AllDigits(version)) return NotFound("model '", name, "' has no version '", version, "'");
  auto v = e.versions.find(std::stoll(std::string(version)));
  if (v == e.versions.end()) return NotFound("model '", name, "' has no version ", version, " loaded");
  return v->second;
}

std::vector<std::shared_ptr<ServedModel>> ModelRepository::Versions(std::string_view name) const {
  std::vector<std::shared_ptr<ServedModel>> out;
  std::lock_guard<std::mutex> lock(mu_);
  auto it = models_.find(std::string(name));
  if (it == models_.end()) return out;
  for (const auto& [v, m] : it->second.versions) out.push_back(m);
  return out;
}

std::vector<std::shared_ptr<ServedModel>> ModelRepository::All() const {
  std::vector<std::shared_ptr<ServedModel>> out;
  std::lock_guard<std::mutex> lock(mu_);
  for (const auto& [name, e] : models_) {
    for (const auto& [v, m] : e.versions) out.push_back(m);
  }
  return out;
}

void ModelRepository::Infer(InferRequest request, InferDone done) const {
  absl::StatusOr<std::shared_ptr<ServedModel>> model = Find(request.model, request.version);
  if (!model.ok()) return done(model.status());
  (*model)->Infer(std::move(request), std::move(done));
}

}  // namespace ge::server::serving
