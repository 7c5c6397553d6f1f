// The `_ChannelShuffle` schema and the pass that forms it (channel_shuffle.h).
#include "runtime/engines/cpu_dense/channel_shuffle.h"

#include <algorithm>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "base/status.h"
#include "runtime/engines/cpu_dense/post_ops.h"

namespace ge::engine::cpu_dense {
namespace {

using Kind = ir::AttrValue::Kind;

absl::Status InferChannelShuffle(ops::InferenceContext& ctx) {
  const ir::ValueType& x = ctx.input_type(0);
  if (!x.is_tensor()) return ctx.Error("input X is not a tensor");
  Shape y = x.shape();
  if (y.unknown_rank()) {
    ctx.set_output(0, x.dtype(), y);
    return absl::OkStatus();
  }
  if (y.rank() < 2) return ctx.Error("input X ", y.ToString(), " has no channel axis");
  // Several inputs: the shuffle of their join along the channels.
  for (int i = 1; i < ctx.num_inputs(); ++i) {
    const ir::ValueType& t = ctx.input_type(i);
    if (!t.is_tensor() || t.shape().unknown_rank() || t.shape().rank() != y.rank()) {
      return ctx.Error("input ", i, " does not join input 0 along the channels");
    }
    const int64_t ci = t.shape().dim(1);
    y.set_dim(1, y.dim(1) < 0 || ci < 0 ? -1 : y.dim(1) + ci);
  }
  const int64_t group = ctx.op().GetAttrOr<int64_t>("group", 0);
  const int64_t begin = ctx.op().GetAttrOr<int64_t>("begin", 0);
  const int64_t c = y.dim(1);
  if (group < 1) return ctx.Error("group ", group, " must be positive");
  if (c >= 0 && c % group != 0) return ctx.Error("channels ", c, " are not a multiple of group ", group);
  int64_t count = ctx.op().GetAttrOr<int64_t>("count", c < 0 ? -1 : c - begin);
  if (begin < 0 || (c >= 0 && (count < 0 || begin + count > c))) {
    return ctx.Error("channels [", begin, ", ", begin + count, ") are not within ", c);
  }
  y.set_dim(1, count);
  ctx.set_output(0, x.dtype(), y);
  return absl::OkStatus();
}

const ir::ValueType& OutType(const ir::Node& n) { return n.op_desc().output(0).type; }

bool Plain(const ir::Node& n, const NodeFilter& can_rewrite) {
  return can_rewrite(n) && n.control_inputs().empty() && n.control_outputs().empty() && n.num_outputs() == 1;
}

// A Reshape of `can_rewrite` with a constant shape whose only reader is
// `reader` (or any single reader when null).
bool ViewOnlyFeeding(const ir::Node& n, const ir::Node* reader, const NodeFilter& can_rewrite) {
  if (n.type() != "Reshape" || !Plain(n, can_rewrite) || n.num_inputs() < 2 || !IsConstInput(n, 1)) return false;
  const auto& uses = n.consumers(0);
  return uses.size() == 1 && (reader == nullptr || uses[0].node == reader);
}

// Dims known except the batch, and the rank `rank`.
bool Typed(const ir::ValueType& t, int64_t rank) {
  if (!t.is_tensor() || (t.dtype() != DataType::kFloat && t.dtype() != DataType::kBFloat16)) return false;
  const Shape& s = t.shape();
  if (s.unknown_rank() || s.rank() != rank) return false;
  for (int64_t d = 1; d < rank; ++d) {
    if (s.dim(d) <= 0) return false;
  }
  return true;
}

struct Shuffle {
  ir::Node *first, *transpose, *last;  // the Reshape, the Transpose and the Reshape back
  int64_t group, channels;
};

// The shuffle whose Transpose is `t`, or nothing.
std::optional<Shuffle> Match(ir::Node& t, const NodeFilter& can_rewrite) {
  if (t.type() != "Transpose" || !Plain(t, can_rewrite) || t.num_inputs() != 1 || !t.input(0)) return std::nullopt;
  ir::Node* first = t.input(0).node;
  if (t.input(0).index != 0 || !ViewOnlyFeeding(*first, &t, can_rewrite) || !first->input(0)) return std::nullopt;
  const auto& uses = t.consumers(0);
  if (uses.size() != 1 || uses[0].index != 0) return std::nullopt;
  ir::Node* last = uses[0].node;
  if (last->type() != "Reshape" || !Plain(*last, can_rewrite) || last->num_inputs() < 2 || !IsConstInput(*last, 1)) {
    return std::nullopt;
  }
  const ir::ValueType& x = first->op_desc().input(0).type;
  if (!x.is_tensor() || x.shape().unknown_rank()) return std::nullopt;
  const int64_t rank = x.shape().rank();
  if (rank < 3 || rank > 5 || !Typed(x, rank) || !Typed(OutType(*first), rank + 1) || !Typed(OutType(t), rank + 1) ||
      !Typed(OutType(*last), rank)) {
    return std::nullopt;
  }
  std::vector<int64_t> perm = {0, 2, 1};
  for (int64_t d = 3; d <= rank; ++d) perm.push_back(d);
  if (t.op_desc().GetAttrOr<std::vector<int64_t>>("perm", {}) != perm) return std::nullopt;
  const Shape& xs = x.shape();
  const Shape& split = OutType(*first).shape();
  const Shape& swapped = OutType(t).shape();
  const Shape& back = OutType(*last).shape();
  const int64_t c = xs.dim(1), g = split.dim(1);
  // Every dim but the batch is known, so equal element counts make the
  // batches equal too.
  if (split.dim(1) * split.dim(2) != c || swapped.dim(1) != split.dim(2) || swapped.dim(2) != g) return std::nullopt;
  if (xs.dim(0) != split.dim(0) || xs.dim(0) != swapped.dim(0) || xs.dim(0) != back.dim(0)) return std::nullopt;
  for (int64_t d = 2; d < rank; ++d) {
    if (split.dim(d + 1) != xs.dim(d) || swapped.dim(d + 1) != xs.dim(d)) return std::nullopt;
  }
  if (back != xs || OutType(*first).dtype() != x.dtype() || OutType(*last).dtype() != x.dtype()) return std::nullopt;
  return Shuffle{first, &t, last, g, c};
}

// The channels [begin, end) a Slice `s` of `shape` takes along axis 1 only,
// step 1; nothing for any other slice.
std::optional<std::pair<int64_t, int64_t>> ChannelSlice(const ir::Node& s, const Shape& shape,
                                                        const NodeFilter& can_rewrite) {
  if (s.type() != "Slice" || !Plain(s, can_rewrite)) return std::nullopt;
  std::vector<int64_t> starts, ends, axes, steps;
  auto read = [&s](int i, std::vector<int64_t>& to) {
    if (i >= s.num_inputs() || !s.input(i)) return true;  // absent
    const Tensor* v = ConstInput(s, i);
    if (v == nullptr) return false;
    to = v->ToInt64Vector();
    return true;
  };
  if (s.num_inputs() == 1) {  // opset 1-9: attributes
    starts = s.op_desc().GetAttrOr<std::vector<int64_t>>("starts", {});
    ends = s.op_desc().GetAttrOr<std::vector<int64_t>>("ends", {});
    axes = s.op_desc().GetAttrOr<std::vector<int64_t>>("axes", {});
  } else if (!read(1, starts) || !read(2, ends) || !read(3, axes) || !read(4, steps)) {
    return std::nullopt;
  }
  if (axes.empty()) {
    for (size_t i = 0; i < starts.size(); ++i) axes.push_back(static_cast<int64_t>(i));
  }
  if (starts.size() != ends.size() || starts.size() != axes.size() || (!steps.empty() && steps.size() != axes.size())) {
    return std::nullopt;
  }
  const int64_t rank = shape.rank(), c = shape.dim(1);
  std::optional<std::pair<int64_t, int64_t>> range;
  for (size_t i = 0; i < axes.size(); ++i) {
    const int64_t axis = axes[i] < 0 ? axes[i] + rank : axes[i];
    if (!steps.empty() && steps[i] != 1) return std::nullopt;
    auto clamp = [c](int64_t v) { return std::clamp<int64_t>(v < 0 ? v + c : v, 0, c); };
    if (axis == 1 && !range) {
      range = std::make_pair(clamp(starts[i]), clamp(ends[i]));
      continue;
    }
    // Another axis: only a slice that keeps all of it.
    if (axis < 0 || axis >= rank || axis == 1 || shape.dim(axis) <= 0) return std::nullopt;
    if (starts[i] != 0 || (ends[i] < shape.dim(axis) && ends[i] >= 0) || ends[i] < 0) return std::nullopt;
  }
  if (!range || range->second <= range->first) return std::nullopt;
  if (!(OutType(s).shape().rank() == rank && OutType(s).shape().dim(1) == range->second - range->first)) {
    return std::nullopt;
  }
  return range;
}

// The channels [begin, end) of each output of a Split `s` of `shape` along
// axis 1 (from the outputs' types: whatever gave the sizes); nothing for any
// other split or an empty part.
std::optional<std::vector<std::pair<int64_t, int64_t>>> ChannelSplit(const ir::Node& s, const Shape& shape,
                                                                     const NodeFilter& can_rewrite) {
  if (s.type() != "Split" || !can_rewrite(s) || !s.control_inputs().empty() || !s.control_outputs().empty()) {
    return std::nullopt;
  }
  const int64_t rank = shape.rank();
  int64_t axis = s.op_desc().GetAttrOr<int64_t>("axis", 0);
  if (axis < 0) axis += rank;
  if (axis != 1 || s.num_outputs() < 1) return std::nullopt;
  std::vector<std::pair<int64_t, int64_t>> ranges;
  int64_t at = 0;
  for (int i = 0; i < s.num_outputs(); ++i) {
    const ir::ValueType& t = s.op_desc().output(i).type;
    if (!t.is_tensor() || t.shape().unknown_rank() || t.shape().rank() != rank) return std::nullopt;
    for (int64_t d = 0; d < rank; ++d) {
      if (d != 1 && t.shape().dim(d) != shape.dim(d)) return std::nullopt;
    }
    const int64_t n = t.shape().dim(1);
    if (n <= 0) return std::nullopt;
    ranges.emplace_back(at, at + n);
    at += n;
  }
  if (at != shape.dim(1)) return std::nullopt;
  return ranges;
}

// A `_ChannelShuffle` of the tensor at `x` (input description `in`) in
// `group` groups, channels [begin, begin + count) of it.
absl::StatusOr<ir::Node*> AddShuffleOf(ir::Graph& graph, ir::OutPort x, const ir::IoDesc& in, const std::string& name,
                                       int64_t group, int64_t begin, int64_t count, const ir::ValueType& out) {
  ir::OpDesc op(graph.UniqueNodeName(name + "_shuffle"), std::string(kChannelShuffleOp));
  op.AddInput(in);
  op.AddOutput({"", out});
  op.SetAttr("group", ir::AttrValue(group));
  op.SetAttr("begin", ir::AttrValue(begin));
  op.SetAttr("count", ir::AttrValue(count));
  GE_ASSIGN_OR_RETURN(ir::Node * node, graph.AddNode(std::move(op)));
  GE_RETURN_IF_ERROR(graph.AddEdge(x.node, x.index, node, 0));
  return node;
}

absl::StatusOr<ir::Node*> AddShuffle(ir::Graph& graph, const Shuffle& m, const std::string& name, int64_t begin,
                                     int64_t count, const ir::ValueType& out) {
  return AddShuffleOf(graph, m.first->input(0), m.first->op_desc().input(0), name, m.group, begin, count, out);
}

// Removes `n` and the operands past its first input nothing else reads.
void RemoveWithOperands(ir::Graph& graph, ir::Node* n) {
  std::vector<ir::Node*> operands;
  for (int i = 1; i < n->num_inputs(); ++i) {
    if (n->input(i)) operands.push_back(n->input(i).node);
  }
  graph.RemoveNode(n);
  for (ir::Node* o : operands) RemoveIfUnused(graph, o);
}

// Whether `n` is a convolution, whose output the layout pass may lay out
// channels-last or in channel blocks.
bool ConvLike(const ir::Node& n) {
  if (n.type() == "Conv" || n.type() == "ConvTranspose") return true;
  return n.type() == kDenseFusedOp && n.op_desc().GetAttrOr<std::string>(kAttrFusedBase, "") == "Conv";
}

// A channel Slice or Split `s` of a convolution's output becomes
// `_ChannelShuffle` nodes of one group (one per read output). Returns
// whether it did.
absl::StatusOr<bool> SliceToShuffles(ir::Graph& graph, ir::Node* s, const NodeFilter& can_rewrite) {
  if (s->num_inputs() < 1 || !s->input(0) || !ConvLike(*s->input(0).node)) return false;
  const ir::IoDesc& in = s->op_desc().input(0);
  const ir::ValueType& x = in.type;
  if (!x.is_tensor() || x.shape().unknown_rank()) return false;
  const int64_t rank = x.shape().rank();
  if (rank < 3 || rank > 5 || !Typed(x, rank)) return false;
  const ir::OutPort source = s->input(0);
  const std::string name = s->name();
  if (const auto range = ChannelSlice(*s, x.shape(), can_rewrite)) {
    if (OutType(*s).dtype() != x.dtype()) return false;
    GE_ASSIGN_OR_RETURN(ir::Node * part, AddShuffleOf(graph, source, in, name, 1, range->first,
                                                      range->second - range->first, OutType(*s)));
    GE_RETURN_IF_ERROR(graph.ReplaceAllUses(s, 0, part, 0));
    RemoveWithOperands(graph, s);
    GE_RETURN_IF_ERROR(graph.RenameNode(part, name));
    return true;
  }
  const auto ranges = ChannelSplit(*s, x.shape(), can_rewrite);
  if (!ranges) return false;
  for (int i = 0; i < s->num_outputs(); ++i) {
    if (s->op_desc().output(i).type.dtype() != x.dtype()) return false;
  }
  for (int i = 0; i < s->num_outputs(); ++i) {
    if (s->consumers(i).empty()) continue;
    const auto [begin, end] = (*ranges)[i];
    GE_ASSIGN_OR_RETURN(ir::Node * part, AddShuffleOf(graph, source, in, absl::StrCat(name, "_", i), 1, begin,
                                                      end - begin, s->op_desc().output(i).type));
    GE_RETURN_IF_ERROR(graph.ReplaceAllUses(s, i, part, 0));
  }
  RemoveWithOperands(graph, s);
  return true;
}

absl::Status Rewrite(ir::Graph& graph, const Shuffle& m, const NodeFilter& can_rewrite) {
  const Shape& shape = OutType(*m.last).shape();
  const std::vector<ir::InPort> uses = m.last->consumers(0);
  ir::Node* full = nullptr;
  std::vector<std::pair<ir::Node*, ir::Node*>> renames;  // replaced Slice -> its shuffle
  std::vector<ir::Node*> splits;                         // replaced Splits
  for (const ir::InPort& use : uses) {
    const auto range = use.index == 0 ? ChannelSlice(*use.node, shape, can_rewrite) : std::nullopt;
    if (range) {
      GE_ASSIGN_OR_RETURN(ir::Node * part, AddShuffle(graph, m, use.node->name(), range->first,
                                                      range->second - range->first, OutType(*use.node)));
      GE_RETURN_IF_ERROR(graph.ReplaceAllUses(use.node, 0, part, 0));
      renames.emplace_back(use.node, part);
      continue;
    }
    const auto ranges = use.index == 0 ? ChannelSplit(*use.node, shape, can_rewrite) : std::nullopt;
    if (ranges) {
      for (int i = 0; i < use.node->num_outputs(); ++i) {
        if (use.node->consumers(i).empty()) continue;
        const auto [begin, end] = (*ranges)[i];
        GE_ASSIGN_OR_RETURN(ir::Node * part, AddShuffle(graph, m, use.node->name(), begin, end - begin,
                                                        use.node->op_desc().output(i).type));
        GE_RETURN_IF_ERROR(graph.ReplaceAllUses(use.node, i, part, 0));
      }
      splits.push_back(use.node);
      continue;
    }
    if (full == nullptr) {
      GE_ASSIGN_OR_RETURN(full, AddShuffle(graph, m, m.last->name(), 0, m.channels, OutType(*m.last)));
    }
    graph.RemoveInputEdge(use.node, use.index);
    GE_RETURN_IF_ERROR(graph.AddEdge(full, 0, use.node, use.index));
  }
  const std::string last_name = m.last->name();
  for (auto& [slice, part] : renames) {
    const std::string name = slice->name();
    RemoveWithOperands(graph, slice);
    GE_RETURN_IF_ERROR(graph.RenameNode(part, name));
  }
  std::vector<ir::Node*> dead = splits;
  dead.insert(dead.end(), {m.last, m.transpose, m.first});
  for (ir::Node* n : dead) RemoveWithOperands(graph, n);
  if (full != nullptr) GE_RETURN_IF_ERROR(graph.RenameNode(full, last_name));
  return absl::OkStatus();
}

// A Concat along the channels whose every reader is a one-input
// `_ChannelShuffle`: the shuffles read the Concat's inputs instead (the
// join is no longer copied first). Returns whether it folded.
absl::StatusOr<bool> FoldConcat(ir::Graph& graph, ir::Node* cat, const NodeFilter& can_rewrite) {
  if (cat->type() != "Concat" || !Plain(*cat, can_rewrite) || cat->num_inputs() < 2) return false;
  const ir::ValueType& out = OutType(*cat);
  if (!out.is_tensor() || out.shape().unknown_rank()) return false;
  const int64_t rank = out.shape().rank(), axis = cat->op_desc().GetAttrOr<int64_t>("axis", 0);
  if (rank < 3 || (axis != 1 && axis != 1 - rank)) return false;
  for (int i = 0; i < cat->num_inputs(); ++i) {
    const ir::ValueType& t = cat->op_desc().input(i).type;
    if (!cat->input(i) || !Typed(t, rank) || t.dtype() != out.dtype()) return false;
  }
  const std::vector<ir::InPort> uses = cat->consumers(0);
  if (uses.empty()) return false;
  for (const ir::InPort& use : uses) {
    if (use.node->type() != kChannelShuffleOp || use.node->num_inputs() != 1 || !can_rewrite(*use.node)) return false;
  }
  for (const ir::InPort& use : uses) {
    ir::Node* shuffle = use.node;
    const std::string name = shuffle->name();
    ir::OpDesc op = shuffle->op_desc();
    op.set_name(graph.UniqueNodeName(name + "_joined"));
    op.mutable_inputs() = cat->op_desc().inputs();
    GE_ASSIGN_OR_RETURN(ir::Node * joined, graph.AddNode(std::move(op)));
    for (int i = 0; i < cat->num_inputs(); ++i) {
      const ir::OutPort p = cat->input(i);
      GE_RETURN_IF_ERROR(graph.AddEdge(p.node, p.index, joined, i));
    }
    GE_RETURN_IF_ERROR(graph.ReplaceAllUses(shuffle, 0, joined, 0));
    graph.RemoveNode(shuffle);
    GE_RETURN_IF_ERROR(graph.RenameNode(joined, name));
  }
  graph.RemoveNode(cat);
  return true;
}

}  // namespace

std::vector<int64_t> ShuffleSources(int64_t channels, int64_t group, int64_t begin, int64_t count) {
  std::vector<int64_t> sources(static_cast<size_t>(std::max<int64_t>(count, 0)));
  const int64_t per_group = group > 0 ? channels / group : 0;
  for (int64_t j = 0; j < count; ++j) {
    const int64_t c = begin + j;
    sources[j] = (c % group) * per_group + c / group;
  }
  return sources;
}

absl::Status RegisterChannelShuffleOp(ops::OpRegistry& registry) {
  if (registry.Find(kChannelShuffleOp) != nullptr) return absl::OkStatus();
  ops::OpSchemaBuilder b{std::string(kChannelShuffleOp), 1};
  b.Doc(
       "cpu_dense: a channel shuffle in `group` groups of the inputs joined along the channels, channels "
       "[begin, begin + count) of it.")
      .VariadicInput("X", "T", 1)
      .Output("Y", "T")
      .TypeConstraint("T", {DataType::kFloat, DataType::kBFloat16})
      .RequiredAttr("group", Kind::kInt)
      .OptionalAttr("begin", Kind::kInt)
      .OptionalAttr("count", Kind::kInt)
      .Infer(InferChannelShuffle);
  return registry.Register(std::move(b).Build());
}

absl::StatusOr<bool> FuseChannelShuffles(ir::Graph& graph, const NodeFilter& can_rewrite) {
  std::vector<std::string> names;
  graph.ForEachNode([&](const ir::Node* n) {
    if (n->type() == "Transpose") names.push_back(n->name());
  });
  bool changed = false;
  for (const std::string& name : names) {
    ir::Node* t = graph.FindNode(name);
    if (t == nullptr) continue;
    const auto m = Match(*t, can_rewrite);
    if (!m) continue;
    ir::Node* source = m->first->input(0).node;
    GE_RETURN_IF_ERROR(Rewrite(graph, *m, can_rewrite));
    changed = true;
    GE_RETURN_IF_ERROR(FoldConcat(graph, source, can_rewrite).status());
  }
  return changed;
}

absl::StatusOr<bool> FuseChannelSlices(ir::Graph& graph, const NodeFilter& can_rewrite) {
  std::vector<std::string> names;
  graph.ForEachNode([&](const ir::Node* n) {
    if (n->type() == "Slice" || n->type() == "Split") names.push_back(n->name());
  });
  bool changed = false;
  for (const std::string& name : names) {
    ir::Node* s = graph.FindNode(name);
    if (s == nullptr) continue;
    GE_ASSIGN_OR_RETURN(bool done, SliceToShuffles(graph, s, can_rewrite));
    changed = changed || done;
  }
  return changed;
}

}  // namespace ge::engine::cpu_dense
