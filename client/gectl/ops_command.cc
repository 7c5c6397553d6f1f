// gectl ops --list: every op ged registers (domain, type, canonical
// version, stateful / value-dependent flags, the loaded engines that have a
// kernel for it) and every ONNX opset adapter (the older op versions the
// importer rewrites into a registered form). scripts/op_coverage.py reads
// the JSON form to compare the registry with libonnx's schemas.
#include <algorithm>
#include <iostream>
#include <map>
#include <vector>

#include "absl/strings/str_join.h"
#include "base/io/json_writer.h"
#include "base/ops/op_registry.h"
#include "base/status.h"
#include "client/gectl/commands.h"
#include "client/gectl/local_runtime.h"
#include "session/tools.h"

namespace ge::gectl {

int OpsCommand(const OpsFlags& flags) {
  if (flags.format != "text" && flags.format != "json") {
    return ReportError(InvalidArgument("bad --format '", flags.format, "': expected text or json"));
  }
  if (!flags.list) return ReportError(InvalidArgument("gectl ops: say --list"));
  // Which loaded engines have a kernel for each op type.
  auto runtime = LocalRuntime::Create(1);
  if (!runtime.ok()) return ReportError(runtime.status());
  std::map<std::string, std::vector<std::string>> kernels = session::KernelEnginesByOpType((*runtime)->root());
  const auto schemas = ops::OpRegistry::Global().All();
  const std::vector<session::OpsetAdapterInfo> adapters = session::ListOpsetAdapters();
  if (flags.format == "json") {
    io::JsonWriter w;
    w.BeginObject().Key("ops").BeginArray();
    for (const ops::OpSchema* s : schemas) {
      w.BeginObject().Key("domain").String(s->domain).Key("type").String(s->type);
      w.Key("since_version").Int(s->since_version).Key("stateful").Bool(s->stateful);
      w.Key("value_dependent_output_shape").Bool(s->value_dependent_output_shape);
      w.Key("engines").BeginArray();
      for (const std::string& e : kernels[s->type]) w.String(e);
      w.EndArray().EndObject();
    }
    w.EndArray().Key("opset_adapters").BeginArray();
    for (const session::OpsetAdapterInfo& a : adapters) {
      w.BeginObject().Key("type").String(a.op_type).Key("first_version").Int(a.first_version);
      w.Key("last_version").Int(a.last_version).Key("canonical").String(a.canonical).EndObject();
    }
    w.EndArray().EndObject();
    std::cout << w.str() << "\n";
    return 0;
  }
  for (const ops::OpSchema* s : schemas) {
    std::cout << (s->domain.empty() ? "ai.onnx" : s->domain) << "\t" << s->type << "\t" << s->since_version << "\t"
              << (s->stateful ? "stateful" : "-") << "\t" << absl::StrJoin(kernels[s->type], ",") << "\n";
  }
  for (const session::OpsetAdapterInfo& a : adapters) {
    std::cout << "adapter\t" << a.op_type << "\t" << a.first_version << ".." << a.last_version << "\t" << a.canonical
              << "\n";
  }
  return 0;
}

}  // namespace ge::gectl
