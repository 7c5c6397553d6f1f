// Fuzz target for the graph text form (ir::ParseGraph), which tests and
// tools feed with hand-written graphs.
//
// Properties: no text crashes the parser or the verifier; a graph the
// parser accepts prints to text that parses to an equal graph and prints
// the same again (the round trip text_format.h promises); a parsed graph
// that verifies and that GraphToProto accepts reads back equal from the
// GraphDef.
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "base/ir/graph_equal.h"
#include "base/ir/proto_convert.h"
#include "base/ir/text_format.h"
#include "base/ir/verifier.h"
#include "fuzz/fuzz_check.h"

extern "C" int LLVMFuzzerInitialize(int* /*argc*/, char*** /*argv*/) {
  ge::fuzz::QuietLogs();
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using ge::fuzz::FuzzCheckOk;
  using ge::fuzz::FuzzFail;
  namespace ir = ge::ir;
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  absl::StatusOr<std::unique_ptr<ir::Graph>> graph = ir::ParseGraph(text);
  ge::fuzz::Note("ParseGraph", graph.status());
  if (!graph.ok()) return 0;

  const std::string printed = ir::PrintGraph(**graph);
  absl::StatusOr<std::unique_ptr<ir::Graph>> reparsed = ir::ParseGraph(printed);
  FuzzCheckOk(reparsed.status(), "printed text parses");
  std::string diff;
  if (!ir::GraphsEqual(**reparsed, **graph, &diff)) {
    FuzzFail("Parse(Print(g)) equals g", diff + "\n" + printed);
  }
  if (ir::PrintGraph(**reparsed) != printed) FuzzFail("Print(Parse(Print(g))) == Print(g)", printed);

  const absl::Status verified = ir::VerifyGraph(**graph);
  ge::fuzz::Note("VerifyGraph", verified);
  if (!verified.ok()) return 0;
  ge::v1::GraphDef proto;
  // The writer may refuse what protobuf cannot carry (names that are not
  // UTF-8, which the text form's \xHH escapes can spell); what it writes
  // must read back equal.
  if (!ir::GraphToProto(**graph, &proto).ok()) return 0;
  absl::StatusOr<std::unique_ptr<ir::Graph>> from_proto = ir::GraphFromProto(proto);
  FuzzCheckOk(from_proto.status(), "GraphDef of a verified graph reads back");
  if (!ir::GraphsEqual(**from_proto, **graph, &diff)) {
    FuzzFail("FromProto(ToProto(g)) equals g", diff + "\n" + printed);
  }
  return 0;
}
