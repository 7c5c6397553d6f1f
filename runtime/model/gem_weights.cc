// Const values stored once in a .gem: the writer's aliases and the
// reader's restoration (gem_weights.h).
#include "runtime/model/gem_weights.h"

#include <optional>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "base/ir/op_types.h"
#include "base/status.h"
#include "base/tensor.h"

namespace ge::runtime {
namespace {

// A tensor's storage as the engines name it (SharedPackings: the address),
// with what makes two views of it one value.
using StorageKey = std::tuple<const void*, DataType, std::vector<int64_t>>;

v1::ConstRef MakeRef(bool partitioned, const std::string& graph, const std::string& node) {
  v1::ConstRef ref;
  ref.set_partitioned(partitioned);
  ref.set_graph(graph);
  ref.set_node(node);
  return ref;
}

std::string RefName(const v1::ConstRef& ref) {
  return StrCat(ref.partitioned() ? "partitioned " : "",
                ref.graph().empty() ? "root" : "subgraph '" + ref.graph() + "'", " node '", ref.node(), "'");
}

}  // namespace

void ShareConstStorage(const ir::Graph& graph, const ir::Graph* partitioned, v1::CompiledModelDef& def) {
  absl::flat_hash_map<StorageKey, v1::ConstRef> first;
  // (in partitioned, graph label) -> the Consts stored without a value.
  absl::flat_hash_map<std::pair<bool, std::string>, absl::flat_hash_set<std::string>> strip;
  auto visit = [&](bool in_partitioned, const ir::Graph& g, const std::string& label) {
    for (const ir::Node* node : g.nodes()) {
      if (node->type() != ir::kConst) continue;
      const std::optional<Tensor> t = node->op_desc().GetAttr<Tensor>(ir::kAttrValue);
      if (!t || t->raw_data() == nullptr || t->SizeInBytes() == 0) continue;
      v1::ConstRef ref = MakeRef(in_partitioned, label, node->name());
      const Shape::Dims& dims = t->shape().dims();
      StorageKey key(t->raw_data(), t->dtype(), std::vector<int64_t>(dims.begin(), dims.end()));
      const auto [it, fresh] = first.try_emplace(std::move(key), ref);
      if (fresh) continue;
      v1::WeightAlias* alias = def.add_weight_aliases();
      *alias->mutable_source() = it->second;  // copied before `ref` moves
      *alias->mutable_node() = std::move(ref);
      strip[{in_partitioned, label}].insert(node->name());
    }
  };
  auto visit_tree = [&](bool in_partitioned, const ir::Graph& root) {
    visit(in_partitioned, root, "");
    for (const ir::Graph* sub : root.subgraphs()) visit(in_partitioned, *sub, sub->name());
  };
  visit_tree(false, graph);
  if (partitioned != nullptr) visit_tree(true, *partitioned);
  if (strip.empty()) return;
  auto strip_graph = [&](bool in_partitioned, v1::GraphDef& g, const std::string& label) {
    auto it = strip.find(std::make_pair(in_partitioned, label));
    if (it == strip.end()) return;
    for (v1::NodeDef& node : *g.mutable_nodes()) {
      if (node.type() == ir::kConst && it->second.contains(node.name())) {
        node.mutable_attrs()->erase(std::string(ir::kAttrValue));
      }
    }
  };
  auto strip_tree = [&](bool in_partitioned, v1::GraphDef& root) {
    strip_graph(in_partitioned, root, "");
    for (v1::GraphDef& sub : *root.mutable_subgraphs()) strip_graph(in_partitioned, sub, sub.name());
  };
  strip_tree(false, *def.mutable_graph());
  if (partitioned != nullptr) strip_tree(true, *def.mutable_partitioned());
}

absl::Status RestoreWeightAliases(const v1::CompiledModelDef& def, ir::Graph& graph, ir::Graph* partitioned) {
  auto find = [&](const v1::ConstRef& ref) -> ir::Node* {
    ir::Graph* tree = ref.partitioned() ? partitioned : &graph;
    if (tree == nullptr) return nullptr;
    ir::Graph* g = ref.graph().empty() ? tree : tree->FindSubgraph(ref.graph());
    return g != nullptr ? g->FindNode(ref.node()) : nullptr;
  };
  const bool restoring_partitioned = partitioned != nullptr;
  for (const v1::WeightAlias& alias : def.weight_aliases()) {
    if (alias.node().partitioned() != restoring_partitioned) continue;
    if (!restoring_partitioned && alias.source().partitioned()) {
      return InvalidArgument("weight alias of ", RefName(alias.node()), " names ", RefName(alias.source()),
                             ": a Const of the graph takes its value from the graph");
    }
    ir::Node* node = find(alias.node());
    if (node == nullptr || node->type() != ir::kConst || node->op_desc().HasAttr(ir::kAttrValue)) {
      return InvalidArgument("weight alias names ", RefName(alias.node()), ", which is not a Const without a value");
    }
    const ir::Node* source = find(alias.source());
    std::optional<Tensor> value = source != nullptr && source->type() == ir::kConst
                                      ? source->op_desc().GetAttr<Tensor>(ir::kAttrValue)
                                      : std::nullopt;
    if (!value) {
      return InvalidArgument("weight alias of ", RefName(alias.node()), " names ", RefName(alias.source()),
                             ", which is not a Const with a value");
    }
    node->mutable_op_desc().SetAttr(ir::kAttrValue, *std::move(value));
  }
  return absl::OkStatus();
}

}  // namespace ge::runtime
