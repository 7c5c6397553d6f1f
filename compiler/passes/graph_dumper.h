// GraphDumper: writes the graph as text and DOT between compile steps
// (ge.dump_graph, ge.dump_path).
#pragma once

#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "base/ir/graph.h"

namespace ge::compiler {

class GraphDumper {
 public:
  // level 0: off; 1: after each step; 2: before and after.
  GraphDumper(int level, std::string directory);
  bool enabled() const { return level_ > 0; }
  // Writes <dir>/<graph>.<seq>.<step>.<before|after>.{txt,dot}.
  absl::Status Before(const ir::Graph& graph, std::string_view step);
  absl::Status After(const ir::Graph& graph, std::string_view step);

 private:
  absl::Status Write(const ir::Graph& graph, std::string_view step, std::string_view when);

  int level_;
  std::string directory_;
  int sequence_ = 0;
};

}  // namespace ge::compiler
