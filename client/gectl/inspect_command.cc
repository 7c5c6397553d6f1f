// gectl inspect: a model's inputs, outputs, op histogram and opsets, read
// without compiling (so it also describes models ged cannot import).
#include <iostream>

#include "base/io/json_writer.h"
#include "base/status.h"
#include "client/gectl/commands.h"
#include "compiler/frontend/onnx_inspect.h"

namespace ge::gectl {
namespace {

std::string ToJson(const frontend::OnnxModelSummary& s, const std::string& path) {
  io::JsonWriter w;
  w.BeginObject().Key("model").String(path).Key("producer").String(s.producer_name);
  w.Key("ir_version").Int(s.ir_version);
  w.Key("opsets").BeginArray();
  for (const auto& [domain, version] : s.opset_imports) {
    w.BeginObject().Key("domain").String(domain).Key("version").Int(version).EndObject();
  }
  w.EndArray();
  for (const auto& [key, list] : {std::pair{"inputs", &s.inputs}, std::pair{"outputs", &s.outputs}}) {
    w.Key(key).BeginArray();
    for (const auto& v : *list) w.BeginObject().Key("name").String(v.name).Key("type").String(v.type).EndObject();
    w.EndArray();
  }
  w.Key("ops").BeginArray();
  for (const auto& [op, count] : s.op_histogram) {
    w.BeginObject().Key("op").String(op).Key("count").Int(count).EndObject();
  }
  w.EndArray().EndObject();
  return w.str();
}

}  // namespace

int InspectCommand(const InspectFlags& flags) {
  if (flags.format != "text" && flags.format != "json") {
    return ReportError(InvalidArgument("bad --format '", flags.format, "': expected text or json"));
  }
  auto summary = frontend::InspectOnnx(flags.model);
  if (!summary.ok()) return ReportError(summary.status());
  std::cout << (flags.format == "json" ? ToJson(*summary, flags.model) + "\n" : summary->ToString());
  return 0;
}

}  // namespace ge::gectl
