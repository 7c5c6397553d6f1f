// Const values stored once in a .gem (format 4, `weight_aliases` in
// proto/ge/v1/model.proto): a compiled model holds one tensor in several
// Const nodes when a weight is read by several partitions (the partitioners
// copy such a Const into every unit that reads it, sharing its storage), by
// the gear branches of a multi-batch model, or by the partitioned form next
// to the flattened graph. The writer stores each storage's value once and
// the other Consts name the one holding it; the reader gives them the same
// tensor back, so a loaded model shares one buffer (and the engines' packings
// of it, which are named by storage) as the compiled one did.
#pragma once

#include "absl/status/status.h"
#include "base/ir/graph.h"
#include "ge/v1/model.pb.h"

namespace ge::runtime {

// Given `def` with `graph` (and `partitioned`, when not null) already
// serialized into it, leaves out every Const value that is the same tensor
// (buffer address, dtype and dims) as an earlier Const's and records a
// WeightAlias for it. Consts are visited in `graph`'s root, its subgraphs in
// order, then `partitioned`'s root and subgraphs.
void ShareConstStorage(const ir::Graph& graph, const ir::Graph* partitioned, v1::CompiledModelDef& def);

// Gives the Consts `def`'s aliases name their sources' tensors: those of
// `graph` when `partitioned` is null, else those of `partitioned` (whose
// sources may be in either). Untrusted input: an alias of a node that is not
// a value-less Const, or of a source that is not a Const with a value (or,
// for a `graph` Const, a source in `partitioned`), is InvalidArgument.
absl::Status RestoreWeightAliases(const v1::CompiledModelDef& def, ir::Graph& graph, ir::Graph* partitioned);

}  // namespace ge::runtime
