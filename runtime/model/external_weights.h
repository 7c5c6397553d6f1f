// External weights (GE's ge.externalWeight): a compiled model's Const
// weights move to files beside the .gem and become FileConstant nodes that
// name them by `location` (relative to the .gem's directory, so the model
// and its files move together; LoadGem supplies the directory).
//
//   mode 1: one file per weight, `<stem>_weights/<n>.bin`;
//   mode 2: one merged file, `<stem>.weights.bin`, each weight 64-byte
//           aligned at its recorded offset.
// Only weights of at least kMinExternalWeightBytes move: small constants
// (shapes, axes, scalars) stay inline. Every graph of the model moves: the
// flat graph, its subgraphs (a gear model's branches) and a mixed model's
// partitioned form; a value several Consts share is written once. A static program's references to a
// moved weight become variable references (FileConstants are bound at load
// through the session's VariableStore and shared across sessions).
#pragma once

#include <string>

#include "absl/status/status.h"
#include "runtime/model/gem.h"

namespace ge::runtime {

inline constexpr size_t kMinExternalWeightBytes = 1024;

// Rewrites `model` for `gem_path` with `mode` (1 or 2) and writes the files.
absl::Status ExternalizeWeights(CompiledModel& model, const std::string& gem_path, int mode);

}  // namespace ge::runtime
