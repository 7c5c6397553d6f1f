// GraphPass: one graph-to-graph transformation of the compile pipeline.
#pragma once

#include <string_view>

#include "absl/status/statusor.h"
#include "base/ir/graph.h"

namespace ge::compiler {

// A pass states its contract in its class comment. Run returns whether it
// changed the graph; an error stops the pipeline.
class GraphPass {
 public:
  virtual ~GraphPass() = default;
  virtual std::string_view name() const = 0;
  virtual absl::StatusOr<bool> Run(ir::Graph& root) = 0;
};

}  // namespace ge::compiler
