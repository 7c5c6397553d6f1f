// gectl compile: the atc analogue. Imports a model, compiles it with the
// given options for this host's engines, and writes a .gem compiled model
// (runtime/model/gem.h) that `gectl run` and `gectl bench` load without
// compiling again. The compiled-model cache is consulted first: a hit is
// written out without compiling; a miss is compiled and stored (a store
// that fails is a warning, the .gem is written all the same).
#include <chrono>
#include <iostream>

#include "absl/strings/numbers.h"
#include "base/logging.h"
#include "base/status.h"
#include "client/gectl/commands.h"
#include "client/gectl/local_runtime.h"
#include "compiler/build/model_builder.h"
#include "runtime/cache/cache_key.h"
#include "runtime/model/external_weights.h"
#include "runtime/model/gem.h"

namespace ge::gectl {
namespace {

double Since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

struct CacheReport {
  std::string key;
  bool hit = false;
  std::string store_error;
  double hash_seconds = 0;
  cache::LookupTimings lookup;
};

// The model from the cache, or compiled (and stored).
absl::StatusOr<runtime::CompiledModel> CompileCached(std::unique_ptr<ir::Graph> graph, const OptionMap& options,
                                                     LocalRuntime& rt, CacheReport& report) {
  cache::ModelCache* cache = ProcessCache();
  if (cache != nullptr) {
    const auto start = std::chrono::steady_clock::now();
    const cache::KeyContext context{&rt.engines(), rt.pool() ? rt.pool()->num_threads() + 1 : 1, rt.pool()};
    absl::StatusOr<std::string> key = cache::ComputeCacheKey(*graph, options, context);
    report.hash_seconds = Since(start);
    if (!key.ok()) {
      // A cache problem never fails a compile.
      Logger("cache").warn("compiling without the cache: {}", key.status().message());
      cache = nullptr;
    } else {
      report.key = *key;
    }
  }
  if (cache != nullptr) {
    absl::StatusOr<runtime::CompiledModel> hit = cache->Lookup(report.key, rt.engines(), &report.lookup);
    if (hit.ok()) {
      report.hit = true;
      return hit;
    }
  }
  GE_ASSIGN_OR_RETURN(runtime::CompiledModel model,
                      compiler::BuildCompiledModel(std::move(graph), options, rt.engines(), rt.pool()));
  if (cache != nullptr) {
    absl::Status stored = cache->StoreModel(report.key, *model.graph, model.program ? &*model.program : nullptr,
                                            model.options, rt.engines(), model.partitioned.get(), &model.variables);
    if (!stored.ok()) {
      report.store_error = std::string(stored.message());
      Logger("cache").warn("the model is compiled but not cached: {}", stored.message());
    }
  }
  return model;
}

absl::Status Compile(const CompileFlags& flags) {
  if (!runtime::IsGemPath(flags.output)) return InvalidArgument("-o ", flags.output, ": the output must end in .gem");
  GE_ASSIGN_OR_RETURN(OptionMap options, ParseOptionFlags(flags.options));
  if (flags.external_weight >= 0) options["ge.externalWeight"] = std::to_string(flags.external_weight);
  int external_weight = 0;
  if (auto it = options.find("ge.externalWeight"); it != options.end()) {
    GE_RETURN_IF_ERROR(ValidateOptions({{it->first, it->second}}));
    (void)absl::SimpleAtoi(it->second, &external_weight);
  }
  if (external_weight != 0 && flags.external_weights) {
    return InvalidArgument("--external-weights and --external-weight ", external_weight, " are alternatives: pick one");
  }
  auto start = std::chrono::steady_clock::now();
  GE_ASSIGN_OR_RETURN(auto graph, LoadModel(flags.model, options));
  const double import_seconds = Since(start);
  GE_ASSIGN_OR_RETURN(auto rt, LocalRuntime::Create(flags.threads));
  CacheReport report;
  start = std::chrono::steady_clock::now();
  GE_ASSIGN_OR_RETURN(runtime::CompiledModel model, CompileCached(std::move(graph), options, *rt, report));
  const double compile_seconds = Since(start);
  if (external_weight != 0) GE_RETURN_IF_ERROR(runtime::ExternalizeWeights(model, flags.output, external_weight));
  runtime::GemWriteOptions write;
  write.external_weights = flags.external_weights;
  start = std::chrono::steady_clock::now();
  GE_RETURN_IF_ERROR(runtime::SaveGem(model, flags.output, rt->engines(), write));
  const double write_seconds = Since(start);
  std::cout << flags.output << ": " << (model.program ? "static" : "dynamic");
  if (model.program) {
    std::cout << ", " << model.program->tasks.size() << " tasks, arena " << model.program->arena_bytes
              << " bytes (lower bound " << model.program->lower_bound_bytes << ")";
  }
  std::cout << std::endl;
  if (!report.key.empty()) {
    std::cout << "cache: " << (report.hit ? "hit " : "miss ") << report.key;
    if (!report.hit) std::cout << (report.store_error.empty() ? " (stored)" : " (not stored)");
    std::cout << std::endl;
  }
  if (flags.timings) {
    std::cout << "timings: import " << import_seconds << " s, hash " << report.hash_seconds << " s, cache read "
              << report.lookup.read << " s, verify " << report.lookup.verify << " s, load " << report.lookup.load
              << " s, " << (report.hit ? "hit total " : "compile total ") << compile_seconds << " s, write "
              << write_seconds << " s" << std::endl;
  }
  return absl::OkStatus();
}

}  // namespace

int CompileCommand(const CompileFlags& flags) {
  absl::Status s = Compile(flags);
  return s.ok() ? 0 : ReportError(s);
}

}  // namespace ge::gectl
