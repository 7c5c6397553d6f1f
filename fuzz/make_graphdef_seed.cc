// Writes the GraphDef seeds of the graphdef fuzz target from text-form
// graphs: make_graphdef_seed IN.txt OUT.pb (parse, convert, serialize). The
// graphs need not verify; the seeds then start the fuzzer on the verifier's
// error paths too. Built in the fuzz tree (fuzz/CMakeLists.txt).
#include <cstdio>
#include <fstream>
#include <iterator>
#include <string>

#include "base/ir/proto_convert.h"
#include "base/ir/text_format.h"
#include "base/strings.h"

int main(int argc, char** argv) {
  if (argc != 3) {
    std::fprintf(stderr, "usage: %s IN.txt OUT.pb\n", argv[0]);
    return 1;
  }
  std::ifstream in(argv[1], std::ios::binary);
  const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  auto graph = ge::ir::ParseGraph(text);
  if (!graph.ok()) {
    std::fprintf(stderr, "%s: %s\n", argv[1], std::string(ge::StdView(graph.status().message())).c_str());
    return 1;
  }
  ge::v1::GraphDef proto;
  if (absl::Status s = ge::ir::GraphToProto(**graph, &proto); !s.ok()) {
    std::fprintf(stderr, "%s: %s\n", argv[1], std::string(ge::StdView(s.message())).c_str());
    return 1;
  }
  std::ofstream out(argv[2], std::ios::binary);
  if (!proto.SerializeToOstream(&out)) {
    std::fprintf(stderr, "cannot write %s\n", argv[2]);
    return 1;
  }
  return 0;
}
