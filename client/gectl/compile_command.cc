// gectl compile: the atc analogue. Imports a model, compiles it with the
// given options for this host's engines, and writes a .gem compiled model
// that `gectl run` and `gectl bench` load without compiling again. It
// compiles through the cache as every other path does (session/
// compile_cache.h, the operator's namespace, ge.graph_key respected), in
// direct mode: the model file is hashed, not imported, and a hit is written
// out without importing or compiling; a miss is imported, compiled and
// stored (a store that fails is a warning, the .gem is written all the same).
#include <chrono>
#include <iostream>

#include "absl/strings/numbers.h"
#include "base/logging.h"
#include "base/status.h"
#include "client/gectl/commands.h"
#include "client/gectl/local_runtime.h"
#include "session/compile_cache.h"
#include "session/tools.h"

namespace ge::gectl {
namespace {

double Since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

absl::Status Compile(const CompileFlags& flags) {
  if (!session::IsCompiledModelPath(flags.output))
    return InvalidArgument("-o ", flags.output, ": the output must end in .gem");
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
  GE_ASSIGN_OR_RETURN(auto rt, LocalRuntime::Create(flags.threads));
  auto start = std::chrono::steady_clock::now();
  GE_ASSIGN_OR_RETURN(session::GraphSource source, rt->Source(flags.model, options));
  const double read_seconds = Since(start);
  // Imports happen inside the compile only on a miss: timed apart.
  double import_seconds = 0;
  auto import = std::move(source.import);
  source.import = [&import, &import_seconds]() {
    const auto begin = std::chrono::steady_clock::now();
    auto imported = import();
    import_seconds = Since(begin);
    return imported;
  };
  session::CacheUse report;
  const session::CacheScope scope = rt->root().OperatorScope();
  // The plain form (weights inline) of a hit is the entry's export, when it
  // has one: linked or copied to the output, nothing loaded or serialized.
  const bool plain = !flags.external_weights && external_weight == 0;
  start = std::chrono::steady_clock::now();
  if (scope.cache != nullptr && plain) {
    absl::StatusOr<cache::DirectEntry> found =
        session::ResolveSource(source, options, rt->engines(), rt->pool(), scope, &report);
    std::string how;
    absl::StatusOr<std::string> summary =
        found.ok() ? scope.cache->ExportTo(found->content_ns, found->content_key, flags.output, &how)
                   : absl::StatusOr<std::string>(found.status());
    if (summary.ok()) {
      const double hit_seconds = Since(start);
      std::cout << flags.output << ": " << *summary << std::endl;
      std::cout << "cache: hit " << found->content_key << (report.direct_key.empty() ? "" : " (direct)") << std::endl;
      if (flags.timings) {
        std::cout << "timings: read " << read_seconds << " s, import 0 s, hash " << report.hash_seconds
                  << " s, hit total " << hit_seconds << " s (the cached .gem by " << how << ")" << std::endl;
      }
      return absl::OkStatus();
    }
  }
  GE_ASSIGN_OR_RETURN(runtime::CompiledModel model,
                      session::CompileSourceThroughCache(source, options, rt->engines(), rt->pool(), scope, &report));
  const double compile_seconds = Since(start) - import_seconds;
  session::GemWriteFlags write;
  write.external_weights = flags.external_weights;
  write.external_weight = external_weight;
  start = std::chrono::steady_clock::now();
  GE_RETURN_IF_ERROR(session::WriteCompiledModel(model, flags.output, rt->root(), write));
  const double write_seconds = Since(start);
  std::string summary = model.program ? "static" : "dynamic";
  if (model.program) {
    summary += StrCat(", ", model.program->tasks.size(), " tasks, arena ", model.program->arena_bytes,
                      " bytes (lower bound ", model.program->lower_bound_bytes, ")");
  }
  std::cout << flags.output << ": " << summary << std::endl;
  if (!report.key.empty()) {
    std::cout << "cache: " << (report.hit ? "hit " : "miss ") << report.key;
    if (!report.hit) std::cout << (report.store_error.empty() ? " (stored)" : " (not stored)");
    if (report.direct_hit) std::cout << " (direct)";
    std::cout << std::endl;
  }
  // The plain output becomes the entry's export (where the entry is: ours,
  // since gectl reads and writes the operator's namespace).
  if (scope.cache != nullptr && plain && !report.key.empty() && (report.hit || report.store_error.empty())) {
    if (absl::Status kept = scope.cache->AddExport(scope.ns, report.key, flags.output, summary); !kept.ok()) {
      Logger("cache").warn("the output is not kept with the cache entry: {}", kept.message());
    }
  }
  if (flags.timings) {
    std::cout << "timings: read " << read_seconds << " s, import " << import_seconds << " s, hash "
              << report.hash_seconds << " s, cache read " << report.lookup.read << " s, verify " << report.lookup.verify
              << " s, load " << report.lookup.load << " s, " << (report.hit ? "hit total " : "compile total ")
              << compile_seconds << " s, write " << write_seconds << " s" << std::endl;
  }
  return absl::OkStatus();
}

}  // namespace

int CompileCommand(const CompileFlags& flags) {
  absl::Status s = Compile(flags);
  return s.ok() ? 0 : ReportError(s);
}

}  // namespace ge::gectl
