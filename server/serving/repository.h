// ModelRepository: a Triton-layout model repository served by ged
// (docs/serving.md). DIR/NAME/config.pbtxt (optional) and
// DIR/NAME/VERSION/model.onnx (or default_model_filename; a model.onnx/
// directory may hold external data) become ServedModels, compiled through
// the daemon's cache in the operator's namespace.
//
// Control modes: `none` loads every model at start-up and refuses load and
// unload; `explicit` loads the start-up list (--load-model) and then what
// an operator loads or unloads; `poll` loads everything and rescans every
// repository_poll_secs, reloading a model whose files changed (the new
// versions load beside the old ones, which serve until the switch) and
// unloading one whose directory went away. Unloading lets the requests
// already queued finish; the old versions are destroyed by Reap() once
// nothing uses them.
//
// Readiness follows Triton's strict rule: the repository is ready once the
// start-up loading finished and every model whose load was asked for
// (start-up or since) is ready. A model that failed is not ready, its
// reason in the index; the others serve.
#pragma once

#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "server/serving/served_model.h"
#include "session/runtime.h"

namespace ge::server::serving {

enum class ControlMode { kNone, kExplicit, kPoll };
absl::StatusOr<ControlMode> ParseControlMode(std::string_view text);

struct RepositoryOptions {
  std::string dir;
  ControlMode mode = ControlMode::kNone;
  std::vector<std::string> startup_models;  // explicit mode
  int load_threads = 2;                     // start-up loads at once
  LoadSettings load;
};

struct IndexEntry {
  std::string name;
  std::string version;  // empty when no version is loaded
  std::string state;    // READY, LOADING, UNLOADING, UNAVAILABLE
  std::string reason;
};

class ModelRepository {
 public:
  // NOT_FOUND when `options.dir` is not a directory.
  static absl::StatusOr<std::unique_ptr<ModelRepository>> Open(const session::Runtime& runtime,
                                                               RepositoryOptions options);
  ~ModelRepository();

  // Loads the start-up models, several at once; returns when each has
  // loaded or failed (failures are logged and kept in the index).
  void LoadStartupModels();
  // An operator's load or unload: FAILED_PRECONDITION in mode none.
  absl::Status RequestLoad(const std::string& name);
  absl::Status RequestUnload(const std::string& name);
  // Poll mode: rescans (a no-op otherwise).
  void Poll();
  // Destroys unloaded versions nothing uses any more.
  void Reap();
  // Stops every model (queued requests finish) and destroys them.
  void Shutdown();

  // Every model of the directory and every loaded one; with `ready_only`,
  // the ready versions only.
  std::vector<IndexEntry> Index(bool ready_only) const;
  bool Ready() const;
  // The version serving `version` ("": the newest) of `name`: NOT_FOUND for
  // an unknown model or version, UNAVAILABLE for a model not loaded (its
  // reason), INVALID_ARGUMENT for a name with '/' or '..'.
  absl::StatusOr<std::shared_ptr<ServedModel>> Find(std::string_view name, std::string_view version) const;
  // The loaded versions of `name`, newest last.
  std::vector<std::shared_ptr<ServedModel>> Versions(std::string_view name) const;
  // Every loaded version of every model.
  std::vector<std::shared_ptr<ServedModel>> All() const;
  // Finds the model and hands it the request; errors come through `done`.
  void Infer(InferRequest request, InferDone done) const;
  ControlMode mode() const { return options_.mode; }

  static absl::Status CheckModelName(std::string_view name);

 private:
  struct Entry {
    std::string state = "UNAVAILABLE";
    std::string reason;
    std::map<int64_t, std::shared_ptr<ServedModel>> versions;
    std::string signature;  // the files as of the last load attempt (poll mode)
    bool wanted = false;    // a load was asked for: counts for readiness
    bool busy = false;      // a load or unload is under way
  };
  ModelRepository(const session::Runtime& runtime, RepositoryOptions options)
      : runtime_(runtime), options_(std::move(options)) {}
  absl::Status Load(const std::string& name);
  absl::Status Unload(const std::string& name);
  // Loads the versions the model's policy picks.
  absl::StatusOr<std::map<int64_t, std::shared_ptr<ServedModel>>> LoadVersions(const std::string& name) const;
  // Model directory names of the repository, sorted.
  std::vector<std::string> Scan() const;
  // Paths, sizes and modification times of the model's files.
  std::string Signature(const std::string& name) const;

  const session::Runtime& runtime_;
  const RepositoryOptions options_;
  mutable std::mutex mu_;
  std::map<std::string, Entry> models_;
  std::vector<std::shared_ptr<ServedModel>> retired_;  // unloaded, maybe still in use
  bool startup_done_ = false;
};

}  // namespace ge::server::serving
