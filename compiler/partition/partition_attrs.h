// The attribute propagation registry (GE's PartitionNodeAttrNameManager):
// which node attributes cross the boundary between a PartitionedCall and
// the nodes inside its subgraph, and in which direction.
//
//   * kNodesToCall: when every (non-boundary) node of the subgraph carries
//     the attribute with the same value, the PartitionedCall gets it too
//     (a subgraph of one pipeline stage is in that stage).
//   * kCallToNodes: the PartitionedCall's value is copied onto the nodes
//     inside; onto those that lack it, or onto all when `overwrite` is set
//     (a node of a dynamic subgraph is dynamic).
//
// Registration is explicit: RegisterBuiltinPartitionAttrs fills a registry
// with ged's attributes, and Builtin() holds one filled on first use. Tests
// and strategies may build their own registry.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "base/ir/node.h"

namespace ge::partition {

enum class AttrFlow : uint8_t { kNodesToCall, kCallToNodes };

struct PartitionAttr {
  std::string name;
  AttrFlow flow;
  bool overwrite = false;  // kCallToNodes only
};

class PartitionAttrRegistry {
 public:
  // The registry RegisterBuiltinPartitionAttrs fills, built on first use.
  static const PartitionAttrRegistry& Builtin();

  // AlreadyExists when `name` is registered.
  absl::Status Register(PartitionAttr attr);
  const std::vector<PartitionAttr>& attrs() const { return attrs_; }
  // Names of the kCallToNodes attributes (for ir::FlattenOptions).
  std::vector<std::string> CallToNodeNames() const;

  // Applies every kNodesToCall attribute from `nodes` onto `call`.
  void ApplyToCall(ir::Node& call, const std::vector<ir::Node*>& nodes) const;
  // Applies every kCallToNodes attribute of `call` onto `nodes`.
  void ApplyToNodes(const ir::Node& call, const std::vector<ir::Node*>& nodes) const;

 private:
  std::vector<PartitionAttr> attrs_;
};

// ged's attributes: `_stage_level` and `_stream_label` flow to the call when
// uniform; `_is_unknown_shape` flows into the nodes, overwriting.
void RegisterBuiltinPartitionAttrs(PartitionAttrRegistry& registry);

// Attribute names the partitioners read and write (besides base/ir/op_types.h).
inline constexpr std::string_view kAttrDynamicShapePartitioned = "_dynamic_shape_partitioned";
inline constexpr std::string_view kAttrStreamLabel = "_stream_label";
inline constexpr std::string_view kAttrTilingDepend = "_tiling_depend";
inline constexpr std::string_view kAttrSupportTilingOffload = "_support_tiling_offload";
inline constexpr std::string_view kAttrSupportAddrRefresh = "_is_support_addr_refresh";
inline constexpr std::string_view kAttrControlFlowGroup = "_control_flow_group";
inline constexpr std::string_view kAttrRefVariable = "_ref_variable";
// On every PartitionedCall a partitioner made: the partitioner's name.
inline constexpr std::string_view kAttrPartitionedBy = "_partitioned_by";
inline constexpr std::string_view kAttrPeerIndex = "peer_index";
inline constexpr std::string_view kAttrPeerNode = "_peer_node";
inline constexpr std::string_view kAttrPeerPort = "_peer_port";

}  // namespace ge::partition
