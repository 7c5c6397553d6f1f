// The checks a .gem passes before anything runs it: a .gem is as untrusted
// as the bytes it came from (LoadModel's request, a shared cache tier), so
// its graphs, its static program and its options are verified, never
// assumed (docs/security.md, "hostile .gem").
//
// VerifyLoadedModel (every load, whatever the source):
//   * every graph (the flattened graph and the partitioned form) passes the
//     IR verifier and is typed again by shape inference: each node's output
//     types must be what its op infers from its inputs (a recorded dim or
//     dtype that contradicts inference is refused), so a kernel is never
//     handed types its op could not produce;
//   * Const nodes hold a value of the type they declare;
//   * the static program agrees with the graph: its inputs are the graph's
//     Data nodes in order and of their types, its outputs the NetOutput's
//     inputs, every weight a Const node of the graph, every task a distinct
//     computing node on the engine the node is placed on. What each task
//     reference points to (arena bounds, weight and input types, dtypes
//     against the node's OpDesc, blob versions) the StaticExecutor checks
//     at load (runtime/executor/static_program_check.h), against the real
//     buffers.
// CheckClientModel (a .gem a client sent, LoadGemFromBytes): its options
// must be options a client may set — known keys with valid values, none
// naming a path or file (ge.dump_path, ge.dump_graph, ge.exec.value_bins,
// ge.graph_compiler_cache_dir) — and no graph may hold a FileConstant (a
// file the daemon would read). Refusals are InvalidArgument naming the
// graph, node or option.
#pragma once

#include "absl/status/status.h"
#include "runtime/model/gem.h"

namespace ge::runtime {

absl::Status VerifyLoadedModel(CompiledModel& model);
// Its two halves: the graphs (before the program is read from the file, so
// that tasks copy the re-typed OpDescs), then the program against them.
absl::Status VerifyModelGraphs(CompiledModel& model);
absl::Status VerifyModelProgram(const CompiledModel& model);

absl::Status CheckClientModel(const CompiledModel& model);

// Options a .gem from a client may not carry: they name paths or files the
// daemon would read or write.
bool IsPathOption(std::string_view key);

}  // namespace ge::runtime
