// The option table. Adding a key: add a row here, parse it in the typed
// struct of the layer that uses it, and document it in docs/options.md.
#include "base/options.h"

#include <algorithm>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "base/status.h"
#include "base/strings.h"

namespace ge {
namespace {

absl::Status AnyString(std::string_view) { return absl::OkStatus(); }

absl::Status Bool01(std::string_view v) {
  if (v == "0" || v == "1" || v == "true" || v == "false") return absl::OkStatus();
  return InvalidArgument("expected 0, 1, true or false");
}

absl::Status EngineList(std::string_view v) {
  for (const std::string& name : ParseListOption(v)) {
    for (char c : name) {
      if (!absl::ascii_isalnum(static_cast<unsigned char>(c)) && c != '_' && c != '-') {
        return InvalidArgument("engine name '", name, "' has a character other than letters, digits, _ and -");
      }
    }
  }
  return absl::OkStatus();
}

absl::Status BackendList(std::string_view v) {
  for (const std::string& name : ParseListOption(v)) {
    for (char c : name) {
      if (!absl::ascii_isalnum(static_cast<unsigned char>(c)) && c != '_' && c != '-') {
        return InvalidArgument("backend name '", name, "' has a character other than letters, digits, _ and -");
      }
    }
  }
  return absl::OkStatus();
}

absl::Status IntAtLeast(std::string_view v, int64_t min) {
  int64_t n;
  if (!absl::SimpleAtoi(AbslView(v), &n) || n < min) return InvalidArgument("expected an integer >= ", min);
  return absl::OkStatus();
}
absl::Status LowerLimit(std::string_view v) { return IntAtLeast(v, -1); }
absl::Status InterOpThreads(std::string_view v) {
  int64_t n;
  if (!absl::SimpleAtoi(AbslView(v), &n) || n < 1 || n > 256)
    return InvalidArgument("expected an integer from 1 to 256");
  return absl::OkStatus();
}
absl::Status NonNegative(std::string_view v) { return IntAtLeast(v, 0); }
absl::Status Positive(std::string_view v) { return IntAtLeast(v, 1); }
absl::Status OptionalInteger(std::string_view v) {
  int64_t n;
  if (v.empty() || absl::SimpleAtoi(AbslView(v), &n)) return absl::OkStatus();
  return InvalidArgument("expected an integer or nothing");
}

absl::Status ExternalWeightMode(std::string_view v) {
  if (v == "0" || v == "1" || v == "2") return absl::OkStatus();
  return InvalidArgument("expected 0 (weights in the model), 1 (one file per weight) or 2 (one merged file)");
}

absl::Status GraphKey(std::string_view v) {
  if (v.size() > 128) return InvalidArgument("expected at most 128 characters");
  for (char c : v) {
    if (!absl::ascii_isalnum(static_cast<unsigned char>(c)) && c != '_' && c != '-' && c != '.') {
      return InvalidArgument("expected letters, digits, _, . and - only");
    }
  }
  return absl::OkStatus();
}

absl::Status DumpGraphLevel(std::string_view v) {
  if (v == "0" || v == "1" || v == "2") return absl::OkStatus();
  return InvalidArgument("expected 0 (off), 1 (after each pipeline step) or 2 (also before)");
}

absl::Status OnnxShapeInference(std::string_view v) {
  if (v == "auto" || v == "always") return absl::OkStatus();
  return InvalidArgument("expected auto or always");
}

// Gear lists: integers >= 1 separated by ',' (and ';' between gears);
// compiler/gear_options.cc checks the rest (counts, exclusivity, fit).
absl::Status GearList(std::string_view v) {
  for (char c : v) {
    if (!absl::ascii_isdigit(static_cast<unsigned char>(c)) && c != ',' && c != ';' && c != ' ') {
      return InvalidArgument("expected integers separated by ',' (gears separated by ';')");
    }
  }
  return absl::OkStatus();
}

// "NAME:D0,D1;NAME:D0": every entry has a name and integer dims >= -1.
absl::Status InputShapeList(std::string_view v) {
  for (absl::string_view entry : absl::StrSplit(AbslView(v), ';', absl::SkipWhitespace())) {
    const size_t colon = entry.rfind(':');
    if (colon == absl::string_view::npos || colon == 0) {
      return InvalidArgument("expected NAME:D0,D1,... entries separated by ';'");
    }
    absl::string_view dims = absl::StripAsciiWhitespace(entry.substr(colon + 1));
    if (dims.empty()) continue;
    for (absl::string_view d : absl::StrSplit(dims, ',')) {
      int64_t n;
      if (!absl::SimpleAtoi(absl::StripAsciiWhitespace(d), &n) || n < -1) {
        return InvalidArgument("dim '", StdView(d), "' is not an integer >= -1");
      }
    }
  }
  return absl::OkStatus();
}

// Pass names: letters, digits, _, . and - (the compiler driver checks that
// each names a pass that may be disabled).
absl::Status PassList(std::string_view v) {
  for (const std::string& name : ParseListOption(v)) {
    for (char c : name) {
      if (!absl::ascii_isalnum(static_cast<unsigned char>(c)) && c != '_' && c != '-' && c != '.') {
        return InvalidArgument("pass name '", name, "' has a character other than letters, digits, _, . and -");
      }
    }
  }
  return absl::OkStatus();
}

const std::vector<OptionSpec>& Table() {
  static const std::vector<OptionSpec>* table = new std::vector<OptionSpec>{
      {"ge.compileHybridMode", "0",
       "With gears: 1 also compiles the dynamic graph and runs inputs that fit no gear on it.", Bool01},
      {"ge.disable_passes", "",
       "Comma-separated compile pipeline passes not to run (gectl opt --list-passes); an unknown or required "
       "pass is an error.",
       PassList},
      {"ge.dump_graph", "0", "Dump the graph as text and DOT: 1 after each compile pipeline step, 2 before and after.",
       DumpGraphLevel, /*operator_only=*/true},
      {"ge.dump_path", ".", "Directory for ge.dump_graph files (created when absent).", AnyString,
       /*operator_only=*/true},
      {"ge.dynamicBatchSize", "", "Gears of dim 0, e.g. 1,4,8 (atc --dynamic_batch_size); see docs/options.md.",
       GearList},
      {"ge.dynamicDims", "", "Gears of the unknown dims, e.g. 1,32;1,64 (atc --dynamic_dims).", GearList},
      {"ge.dynamicImageSize", "", "Gears of H,W, e.g. 224,224;256,256 (atc --dynamic_image_size).", GearList},
      {"ge.engineType", "auto",
       "auto: engines with cost tables compete for each node by estimated cost; an engine name: that engine "
       "wins every node it runs (among engines with cost tables); never excludes the others.",
       EngineList},
      {"ge.exec.disable_host_cpu_fallback", "0",
       "1: fail compilation naming every compute node that would fall back to host_cpu, and why.", Bool01},
      {"ge.exec.exclude_engines", "", "Comma-separated engines never to place nodes on; unknown names are a warning.",
       EngineList},
      {"ge.exec.host_exec_ops", "", "Comma-separated op types to run on host_cpu.", AnyString},
      {"ge.exec.inter_op_parallelism", "1",
       "Dynamic runs: nodes whose inputs are ready run at once on up to this many threads (1: one after another).",
       InterOpThreads},
      {"ge.exec.output_cache_idle_trim_ms", "2000",
       "Sessions: milliseconds without an allocation after which the session's cache of output buffers returns "
       "them to the host (0: kept until the session ends).",
       NonNegative},
      {"ge.exec.seed", "",
       "Seed of the random ops without a seed attribute (an integer); empty: each loaded graph draws its own.",
       OptionalInteger},
      {"ge.exec.static_model_ops_lower_limit", "4",
       "Static subgraphs with fewer ops become dynamic; -1 puts the whole graph into one dynamic subgraph.",
       LowerLimit},
      {"ge.exec.value_bins", "",
       "JSON {\"value_bins\": [{\"value_bin_id\": ID, \"value_bin_file\": PATH}]}: files of FileConstants "
       "named by file_id.",
       AnyString, /*operator_only=*/true},
      {"ge.externalWeight", "0",
       "Compiled models: 0 keeps weights in the model, 1 writes each Const to its own file, 2 to one merged file "
       "(FileConstant nodes read them back).",
       ExternalWeightMode},
      {"ge.graph_compiler_cache_dir", "",
       "Directory of a compiled-model cache for this graph (GE's form; with ge.graph_key).", AnyString,
       /*operator_only=*/true},
      {"ge.graph_key", "",
       "Names the graph in the compiled-model cache instead of hashing it (letters, digits, _ . -).", GraphKey},
      {"ge.host_scheduling_max_threshold", "0",
       "An all-static graph with fewer ops than this runs dynamically as a whole (0: never).", NonNegative},
      {"ge.inputShape", "", "Input shapes NAME:D0,D1;... with -1 for dynamic dims (atc --input_shape).",
       InputShapeList},
      {"ge.jitCompile", "1",
       "1: a graph with unknown input dims gets a static plan per input shape at run time (JIT slices); 0: it runs "
       "on the dynamic executor.",
       Bool01},
      {"ge.jitMaxPlans", "64",
       "JIT: plans (static slices) a graph holds at once; at the bound a new shape replaces the least recently used "
       "plan only when it was seen more often, else it runs on the dynamic executor.",
       Positive},
      {"ge.jitMaxRecompiles", "-1",
       "JIT: recompilations (a slice's guard failed) allowed per graph, -1 for no bound; past it, inputs that fit no "
       "plan run on the dynamic executor and no plan is replaced.",
       LowerLimit},
      {"ge.jitPlanMemoryBytes", "134217728",
       "JIT: bytes of the plans' values (their arenas' upper bound) per graph (0: no bound); at the bound plans are "
       "replaced or runs take "
       "the dynamic executor, as at ge.jitMaxPlans.",
       NonNegative},
      {"ge.onnx_shape_inference", "auto",
       "ONNX import: auto skips libonnx's shape inference when ged's own covers every node; always runs it.",
       OnnxShapeInference},
      {"ge.oo.constantFolding", "1",
       "1: evaluate at compile time what does not depend on the inputs (Shape of static tensors, nodes over "
       "Consts); 0: keep every node.",
       Bool01},
      {"ge.subgraph_backends", "",
       "Comma-separated subgraph-API backends applied in order (see docs/design/partitioning.md).", BackendList},
      {"ge.tiling_schedule_optimize", "0",
       "1: tiling can be offloaded to run time, so nodes with a tiling dependency may stay static.", Bool01},
      {"ge.variableMemoryMaxSize", "0", "Bytes of variable memory a session may use (0: no limit beyond the device's).",
       NonNegative},
      {"ge.verify_each_step", "0",
       "1: verify the graph after every compile pass and partitioning step, not only on entry and exit "
       "(always on in debug builds).",
       Bool01},
  };
  return *table;
}

}  // namespace

const std::vector<OptionSpec>& AllOptionSpecs() { return Table(); }

const OptionSpec* FindOptionSpec(std::string_view key) {
  for (const OptionSpec& spec : Table()) {
    if (spec.key == key) return &spec;
  }
  return nullptr;
}

absl::Status ValidateOptions(const OptionMap& options) {
  for (const auto& [key, value] : options) {
    const OptionSpec* spec = FindOptionSpec(key);
    if (spec == nullptr) {
      std::vector<std::string> close;
      for (const OptionSpec& s : Table()) {
        std::string lower_key = absl::AsciiStrToLower(AbslView(key));
        std::string lower_spec = absl::AsciiStrToLower(AbslView(s.key));
        if (lower_spec.find(lower_key.substr(lower_key.rfind('.') + 1)) != std::string::npos) {
          close.emplace_back(s.key);
        }
      }
      return InvalidArgument("unknown option '", key, "'",
                             close.empty() ? "" : StrCat(" (did you mean ", absl::StrJoin(close, ", "), "?)"),
                             "; see docs/options.md");
    }
    absl::Status s = spec->validate(value);
    if (!s.ok()) {
      return InvalidArgument("bad value '", value, "' for option '", key, "': ", StdView(s.message()));
    }
  }
  return absl::OkStatus();
}

absl::Status ParseOptionAssignment(std::string_view text, OptionMap& options) {
  size_t eq = text.find('=');
  if (eq == std::string_view::npos || eq == 0) {
    return InvalidArgument("bad option '", text, "': expected KEY=VALUE");
  }
  options[std::string(text.substr(0, eq))] = std::string(text.substr(eq + 1));
  return absl::OkStatus();
}

absl::StatusOr<bool> ParseBoolOption(std::string_view key, std::string_view value) {
  if (value == "1" || value == "true") return true;
  if (value == "0" || value == "false" || value.empty()) return false;
  return InvalidArgument("bad value '", value, "' for option '", key, "': expected 0 or 1");
}

absl::StatusOr<int64_t> ParseIntOption(std::string_view key, std::string_view value) {
  int64_t n;
  if (!absl::SimpleAtoi(AbslView(value), &n)) {
    return InvalidArgument("bad value '", value, "' for option '", key, "': expected an integer");
  }
  return n;
}

std::vector<std::string> ParseListOption(std::string_view value) {
  std::vector<std::string> out;
  for (absl::string_view piece : absl::StrSplit(AbslView(value), ',')) {
    piece = absl::StripAsciiWhitespace(piece);
    if (!piece.empty()) out.emplace_back(piece);
  }
  return out;
}

std::string OptionOrDefault(const OptionMap& options, std::string_view key) {
  auto it = options.find(key);
  if (it != options.end()) return it->second;
  const OptionSpec* spec = FindOptionSpec(key);
  return spec ? std::string(spec->default_value) : std::string();
}

}  // namespace ge
