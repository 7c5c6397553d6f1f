// ExternalizeWeights: Const -> FileConstant with the bytes written beside
// the .gem, and the static program's weight references rewritten.
#include "runtime/model/external_weights.h"

#include <filesystem>
#include <fstream>
#include <map>

#include "base/io/external_data.h"
#include "base/ir/op_types.h"
#include "base/status.h"

namespace ge::runtime {
namespace {
namespace fs = std::filesystem;

struct Written {
  std::string location;
  int64_t offset = 0;
};

class WeightWriter {
 public:
  WeightWriter(const std::string& gem_path, int mode) : mode_(mode) {
    const fs::path p(gem_path);
    dir_ = p.parent_path();
    stem_ = p.stem().string();
  }

  absl::StatusOr<Written> Write(const Tensor& value) {
    const auto* bytes = static_cast<const char*>(value.raw_data());
    const auto size = static_cast<std::streamsize>(value.SizeInBytes());
    if (mode_ == 1) {
      const std::string location = stem_ + "_weights/" + std::to_string(count_++) + ".bin";
      fs::create_directories(dir_ / (stem_ + "_weights"));
      std::ofstream out(dir_ / location, std::ios::binary | std::ios::trunc);
      out.write(bytes, size);
      if (!out) return FailedPrecondition("cannot write weight file ", (dir_ / location).string());
      return Written{location, 0};
    }
    const std::string location = stem_ + ".weights.bin";
    if (!merged_.is_open()) {
      merged_.open(dir_ / location, std::ios::binary | std::ios::trunc);
      if (!merged_) return FailedPrecondition("cannot write weight file ", (dir_ / location).string());
    }
    const int64_t offset = (written_ + 63) / 64 * 64;
    merged_.write(std::string(static_cast<size_t>(offset - written_), '\0').data(), offset - written_);
    merged_.write(bytes, size);
    written_ = offset + size;
    if (!merged_) return FailedPrecondition("cannot write weight file ", (dir_ / location).string());
    return Written{location, offset};
  }

 private:
  int mode_;
  fs::path dir_;
  std::string stem_;
  int count_ = 0;
  std::ofstream merged_;
  int64_t written_ = 0;
};

absl::Status ToFileConstant(ir::Node& node, const Tensor& value, const Written& where) {
  ir::OpDesc op(node.name(), std::string(ir::kFileConstant));
  for (const auto& [k, v] : node.op_desc().attrs()) {
    if (k != ir::kAttrValue) op.SetAttr(k, v);
  }
  op.SetAttr(io::kAttrShape, value.shape());
  op.SetAttr(io::kAttrDtype, static_cast<int64_t>(value.dtype()));
  op.SetAttr(io::kAttrLocation, where.location);
  op.SetAttr(io::kAttrOffset, where.offset);
  op.SetAttr(io::kAttrLength, static_cast<int64_t>(value.SizeInBytes()));
  for (int i = 0; i < node.num_outputs(); ++i) op.AddOutput(node.op_desc().output(i));
  node.mutable_op_desc() = std::move(op);
  return absl::OkStatus();
}

// Weight index -> variable index for the weights that moved.
void RewriteProgram(StaticProgram& program, const ir::Graph& graph) {
  std::map<int, ValueRef> moved;
  std::vector<StaticWeight> kept;
  for (size_t w = 0; w < program.weights.size(); ++w) {
    const ir::Node* node = graph.FindNode(program.weights[w].node);
    if (node != nullptr && node->type() == ir::kFileConstant) {
      ValueRef ref{ValueRef::Kind::kVariable, 0, static_cast<int>(program.variables.size()), -1, {}};
      program.variables.push_back({node->name(), node->op_desc()});
      moved[static_cast<int>(w)] = ref;
    } else {
      ValueRef ref{ValueRef::Kind::kWeight, 0, static_cast<int>(kept.size()), -1, {}};
      moved[static_cast<int>(w)] = ref;
      kept.push_back(std::move(program.weights[w]));
    }
  }
  program.weights = std::move(kept);
  auto fix = [&](ValueRef& r) {
    if (r.kind != ValueRef::Kind::kWeight) return;
    const ValueRef& to = moved.at(r.index);
    r.kind = to.kind;
    r.index = to.index;
  };
  for (StaticTask& t : program.tasks) {
    for (ValueRef& r : t.inputs) fix(r);
  }
  for (ValueRef& r : program.output_values) fix(r);
}

}  // namespace

absl::Status ExternalizeWeights(CompiledModel& model, const std::string& gem_path, int mode) {
  if (mode != 1 && mode != 2) return InvalidArgument("external weight mode ", mode, " is not 1 or 2");
  if (model.graph == nullptr) return InvalidArgument("no graph to write to ", gem_path);
  WeightWriter writer(gem_path, mode);
  // Every graph the model runs from: the flat graph, the subgraphs its nodes
  // own (a gear model's Case branches), and the partitioned form a mixed
  // model runs from. Their Consts share tensors (the partitioned form and
  // the gear clones copy the tensor, not its bytes): each value is written
  // once and every Const holding it points at that copy.
  std::vector<ir::Graph*> graphs = {model.graph.get()};
  for (ir::Graph* sub : model.graph->subgraphs()) graphs.push_back(sub);
  if (model.partitioned != nullptr) {
    graphs.push_back(model.partitioned.get());
    for (ir::Graph* sub : model.partitioned->subgraphs()) graphs.push_back(sub);
  }
  std::map<std::pair<const void*, size_t>, Written> written;
  for (ir::Graph* graph : graphs) {
    for (ir::Node* node : graph->nodes()) {
      if (node->type() != ir::kConst) continue;
      auto value = node->op_desc().GetAttr<Tensor>(ir::kAttrValue);
      if (!value || !value->defined() || value->dtype() == DataType::kString ||
          value->SizeInBytes() < kMinExternalWeightBytes) {
        continue;
      }
      const std::pair<const void*, size_t> key(value->raw_data(), value->SizeInBytes());
      auto it = written.find(key);
      if (it == written.end()) {
        GE_ASSIGN_OR_RETURN(Written where, writer.Write(*value));
        it = written.emplace(key, std::move(where)).first;
      }
      GE_RETURN_IF_ERROR(ToFileConstant(*node, *value, it->second));
    }
  }
  if (model.program) RewriteProgram(*model.program, *model.graph);
  model.options["ge.externalWeight"] = std::to_string(mode);
  return absl::OkStatus();
}

}  // namespace ge::runtime
