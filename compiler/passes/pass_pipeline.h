// PassPipeline: an ordered list of passes with verification, dumping and
// switching passes off by name (STYLE.md, after XLA's HloPassPipeline).
#pragma once

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "compiler/passes/graph_pass.h"
#include "compiler/passes/graph_dumper.h"

namespace ge::compiler {

class PassPipeline {
 public:
  explicit PassPipeline(std::string name) : name_(std::move(name)) {}

  template <typename T, typename... Args>
  T& AddPass(Args&&... args) {
    auto pass = std::make_unique<T>(std::forward<Args>(args)...);
    T& ref = *pass;
    passes_.push_back(std::move(pass));
    return ref;
  }
  // Passes with these names are skipped.
  void DisablePasses(std::vector<std::string> names) { disabled_ = std::move(names); }
  // Verify the graph before the first pass (on by default: the input may
  // come from a user).
  void set_verify(bool verify) { verify_ = verify; }
  // Also verify after every pass that changed the graph, naming the pass
  // that broke it (with set_verify only; CompileOptions::verify_each_step).
  // Off by default: on a million-node graph each verification costs about a
  // second, and whoever consumes the pipeline's result verifies it once.
  void set_verify_each_pass(bool verify) { verify_each_pass_ = verify; }
  void set_dumper(GraphDumper* dumper) { dumper_ = dumper; }

  // Runs every enabled pass in order; returns whether any changed the graph.
  absl::StatusOr<bool> Run(ir::Graph& root);

 private:
  std::string name_;
  std::vector<std::unique_ptr<GraphPass>> passes_;
  std::vector<std::string> disabled_;
  bool verify_ = true;
  bool verify_each_pass_ = false;
  GraphDumper* dumper_ = nullptr;
};

}  // namespace ge::compiler
