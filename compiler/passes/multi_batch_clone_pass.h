// MultiBatchClonePass: one static copy of the graph per gear, chosen at run
// time by the inputs' shapes (seeds/01 §5.5, GE's MultiBatchClonePass).
//
// With gears (compiler/gear_options.h) the root graph becomes
//
//   Data (max shape, `_user_shape` = the user's shape) ... ─┬─> GearIndex ─> Case ─> NetOutput
//                                                          └───────────────────^
//
// where Case's branch g is a clone of the original graph whose Data nodes
// have gear g's static shapes (`<root>_gear_<g>`), and GearIndex carries the
// gear table (base/ops/gear_index.h). In hybrid mode (ge.compileHybridMode)
// a last branch `<root>_dynamic` keeps the user's shapes, and GearIndex
// selects it for inputs that fit no gear. The Case carries
// `_multi_batch_case` (its branches keep their own input types during shape
// inference, and the partition pipeline splits each branch by itself);
// GearIndex and Case carry `_force_unknown_shape`, so the root runs on the
// dynamic executor and each gear branch's static units on static executors.
//
// Steps, in GE's order: CollectIoNodes (Data by index, NetOutput),
// CreateRootGraph (Data with the max shapes, GearIndex, Case),
// CreateSubgraphs (the clones) and PruneDirectOutput (an output that is a
// graph input directly leaves the root's Data instead of the Case).
//
// Input shapes only (ge.inputShape without gears) set the Data types and
// clone nothing. Graphs that already own subgraphs are refused
// (Unimplemented): their bodies would need one renamed copy per gear.
#pragma once

#include "compiler/gear_options.h"
#include "compiler/passes/graph_pass.h"

namespace ge::compiler {

class MultiBatchClonePass final : public GraphPass {
 public:
  explicit MultiBatchClonePass(GearOptions options) : options_(std::move(options)) {}
  std::string_view name() const override { return "MultiBatchClonePass"; }
  absl::StatusOr<bool> Run(ir::Graph& root) override;

 private:
  GearOptions options_;
};

}  // namespace ge::compiler
