// Parsing an engine's json into EngineAttributes (attributes.h). YAML is a
// superset of JSON, so yaml-cpp reads GE's engine_conf.json form.
#include "runtime/engines/api/attributes.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <string>

#include "base/status.h"
#include "yaml-cpp/yaml.h"

namespace ge::engine {
namespace {

constexpr std::array<std::string_view, 8> kKeys = {"name",        "compute_cost", "atomic",  "composite_engine",
                                                   "independent", "reference",    "version", "cost"};

// [call_ns, element_ns]: two finite, non-negative numbers.
absl::Status ParseOpCost(const YAML::Node& node, const std::string& where, OpCost& out) {
  if (!node.IsSequence() || node.size() != 2) {
    return InvalidArgument(where, ": expected [call_ns, element_ns]");
  }
  const double call = node[0].as<double>();
  const double element = node[1].as<double>();
  if (!std::isfinite(call) || !std::isfinite(element) || call < 0 || element < 0) {
    return InvalidArgument(where, ": costs must be finite and not negative");
  }
  out = {call, element};
  return absl::OkStatus();
}

// "cost": {"ops": {"<op type or *>": [call_ns, element_ns], ...},
//          "boundary": [call_ns, element_ns]} (engine.h CostTable).
absl::Status ParseCostTable(const YAML::Node& node, const std::string& source, CostTable& table) {
  if (!node.IsMap()) return InvalidArgument(source, ": cost must be an object");
  for (const auto& entry : node) {
    const std::string key = entry.first.as<std::string>();
    if (key != "ops" && key != "boundary") {
      return InvalidArgument(source, ": cost has unknown key '", key, "' (expected ops, boundary)");
    }
  }
  CostTable parsed;
  if (node["boundary"]) {
    GE_RETURN_IF_ERROR(ParseOpCost(node["boundary"], source + ": cost.boundary", parsed.boundary));
  }
  if (!node["ops"] || !node["ops"].IsMap() || node["ops"].size() == 0) {
    return InvalidArgument(source, ": cost.ops must be a non-empty object of op type -> [call_ns, element_ns]");
  }
  for (const auto& entry : node["ops"]) {
    const std::string op = entry.first.as<std::string>();
    GE_RETURN_IF_ERROR(ParseOpCost(entry.second, StrCat(source, ": cost.ops.", op), parsed.ops[op]));
  }
  table = std::move(parsed);
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<EngineAttributes> ParseEngineAttributes(std::string_view json, std::string_view source_view,
                                                       std::string_view engine_name) {
  const std::string source(source_view);
  EngineAttributes attrs;
  attrs.name = std::string(engine_name);
  try {
    YAML::Node root = YAML::Load(std::string(json));
    if (!root.IsMap()) return InvalidArgument(source, ": expected a JSON object");
    for (const auto& entry : root) {
      const std::string key = entry.first.as<std::string>();
      if (std::find(kKeys.begin(), kKeys.end(), key) == kKeys.end()) {
        return InvalidArgument(source, ": unknown key '", key,
                               "' (expected name, compute_cost, atomic, composite_engine, independent, "
                               "reference, version, cost)");
      }
    }
    if (root["name"] && root["name"].as<std::string>() != engine_name) {
      return InvalidArgument(source, ": names engine '", root["name"].as<std::string>(), "' but the plugin provides '",
                             engine_name, "'");
    }
    if (root["compute_cost"]) {
      const int cost = root["compute_cost"].as<int>();
      if (cost < 0 || cost > 10) return InvalidArgument(source, ": compute_cost ", cost, " is outside 0..10");
      attrs.compute_cost = cost;
    }
    if (root["atomic"]) attrs.atomic = root["atomic"].as<bool>();
    if (root["composite_engine"]) attrs.composite_engine = root["composite_engine"].as<std::string>();
    if (root["independent"]) attrs.independent_stream = root["independent"].as<bool>();
    if (root["reference"]) attrs.reference = root["reference"].as<bool>();
    if (root["version"]) attrs.version = root["version"].as<std::string>();
    if (root["cost"]) GE_RETURN_IF_ERROR(ParseCostTable(root["cost"], source, attrs.cost));
  } catch (const YAML::Exception& e) {
    return InvalidArgument(source, ": ", e.what());
  }
  if (!attrs.atomic && !attrs.composite_engine.empty()) {
    return InvalidArgument(source, ": a composite engine (atomic false) cannot itself name a composite_engine");
  }
  return attrs;
}

EmbeddedAttributes ParseEmbeddedAttributes(const char* json, std::string_view engine_name) {
  EmbeddedAttributes out;
  auto parsed =
      ParseEngineAttributes(json == nullptr ? "" : json, StrCat(engine_name, ".json (embedded)"), engine_name);
  if (parsed.ok()) {
    out.attributes = *std::move(parsed);
  } else {
    out.attributes.name = std::string(engine_name);
    out.error = parsed.status();
  }
  return out;
}

}  // namespace ge::engine
