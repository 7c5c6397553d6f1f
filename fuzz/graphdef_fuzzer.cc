// Fuzz target for the GraphDef reader (ir::GraphFromProto followed by
// ir::VerifyGraph): how the daemon will receive graphs from clients
// (AddGraph), so every byte is untrusted.
//
// Properties: no serialized GraphDef crashes the reader or the verifier; a
// graph that reads and verifies converts back to a GraphDef that reads to
// an equal graph, and prints to text that parses to an equal graph.
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

#include "base/ir/graph_equal.h"
#include "base/ir/proto_convert.h"
#include "base/ir/text_format.h"
#include "base/ir/verifier.h"
#include "fuzz/fuzz_check.h"
#include "ge/v1/graph.pb.h"

extern "C" int LLVMFuzzerInitialize(int* /*argc*/, char*** /*argv*/) {
  ge::fuzz::QuietLogs();
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using ge::fuzz::FuzzCheckOk;
  using ge::fuzz::FuzzFail;
  namespace ir = ge::ir;
  ge::v1::GraphDef proto;
  if (!proto.ParseFromArray(data, static_cast<int>(size))) return 0;
  absl::StatusOr<std::unique_ptr<ir::Graph>> graph = ir::GraphFromProto(proto);
  ge::fuzz::Note("GraphFromProto", graph.status());
  if (!graph.ok()) return 0;
  const absl::Status verified = ir::VerifyGraph(**graph);
  ge::fuzz::Note("VerifyGraph", verified);
  if (!verified.ok()) return 0;

  ge::v1::GraphDef written;
  FuzzCheckOk(ir::GraphToProto(**graph, &written), "a verified graph converts back to GraphDef");
  absl::StatusOr<std::unique_ptr<ir::Graph>> reread = ir::GraphFromProto(written);
  FuzzCheckOk(reread.status(), "a written GraphDef reads back");
  std::string diff;
  if (!ir::GraphsEqual(**reread, **graph, &diff)) FuzzFail("FromProto(ToProto(g)) equals g", diff);

  const std::string printed = ir::PrintGraph(**graph);
  absl::StatusOr<std::unique_ptr<ir::Graph>> parsed = ir::ParseGraph(printed);
  FuzzCheckOk(parsed.status(), "the text form of a verified graph parses");
  if (!ir::GraphsEqual(**parsed, **graph, &diff)) {
    FuzzFail("Parse(Print(g)) equals g", diff + "\n" + printed);
  }
  return 0;
}
