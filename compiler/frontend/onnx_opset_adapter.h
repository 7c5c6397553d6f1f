// Opset adapters: rewrites of ONNX nodes from an older op version into the
// canonical form ged's op registry describes (the newest version of the op up
// to opset 17).
//
// An adapter sees one NodeProto in its original form and emits NodeProtos in
// canonical form: usually one node of the same type with attributes moved to
// inputs (Squeeze-1/11 `axes` -> Squeeze-13's `axes` input, fed by an emitted
// Constant), sometimes a small subgraph (Softmax-1/11's 2-D coercion ->
// Flatten, Softmax-13, Reshape). The emitted node that replaces the original
// keeps its name, inputs' and outputs' tensor names; helper nodes are named
// "<original name>/<role>" and produce fresh tensor names. Adapters work on
// protos, not on ir::Graph, so that the importer's one conversion path (with
// Constant -> Const and subgraph handling) applies to their output too.
//
// The table maps (op type, range of ONNX op versions) to a rewrite function;
// an op version is the since_version of the schema in effect at the model's
// opset (Softmax at opset 12 is Softmax-11). The table is filled by
// RegisterOnnxOpsetAdapters, explicitly; nothing registers itself.
#pragma once

#include <cstdint>
#include <deque>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "base/status.h"
#include "base/tensor.h"
#include "onnx/onnx_pb.h"

namespace ge::frontend {

// What an adapter may ask about the graph around its node. Every member may
// be empty (the question then has no answer: no type, no constant, not
// consumed).
struct AdapterLookup {
  // The declared or inferred type of a tensor, or null.
  std::function<const onnx::TypeProto*(const std::string&)> type_of;
  // The value of a tensor that is an initializer or a Constant's output.
  std::function<const onnx::TensorProto*(const std::string&)> constant_of;
  // Whether a node or a graph output reads the tensor.
  std::function<bool(const std::string&)> is_consumed;
  // A tensor name unused anywhere in the model, derived from a hint.
  std::function<std::string(std::string_view)> fresh_tensor_name;
};

class OpsetAdapterContext {
 public:
  OpsetAdapterContext(const onnx::NodeProto& node, int64_t opset, int op_version,
                      const AdapterLookup& lookup);

  const onnx::NodeProto& node() const { return node_; }
  int64_t opset() const { return opset_; }
  int op_version() const { return op_version_; }

  // Emits a copy of the original node (name, domain, inputs, outputs,
  // attributes), with `op_type` when given, to be edited into canonical form.
  onnx::NodeProto& EmitCopy(std::string_view op_type = "");
  // Emits an empty helper node named "<original>/<role>" (unnamed when the
  // original is).
  onnx::NodeProto& EmitHelper(std::string_view op_type, std::string_view role);
  // Emits a Constant helper holding `value`; returns its output's name.
  std::string EmitConstant(std::string_view role, const Tensor& value);
  // A fresh tensor name for a helper's output.
  std::string FreshTensorName(std::string_view role);

  // Facts about the original node's input `i` (nullopt / null / false when
  // unknown, absent or out of range).
  std::optional<DataType> InputDtype(int i) const;
  std::optional<int64_t> InputRank(int i) const;
  // The dims of input i (-1 where unknown), when its rank is known.
  std::optional<std::vector<int64_t>> InputDims(int i) const;
  const onnx::TensorProto* ConstantInput(int i) const;
  bool IsConsumed(const std::string& tensor) const;

  // InvalidArgument "node 'n' (Op-<version>, opset <k>): ...".
  template <typename... Args>
  absl::Status Error(const Args&... args) const {
    return InvalidArgument(Label(), ": ", args...);
  }

  // The emitted nodes, in emission order (helpers producing a node's inputs
  // come before it).
  std::vector<onnx::NodeProto> TakeEmitted() {
    std::vector<onnx::NodeProto> out(std::make_move_iterator(emitted_.begin()),
                                     std::make_move_iterator(emitted_.end()));
    emitted_.clear();
    return out;
  }

 private:
  std::string Label() const;
  const onnx::TypeProto* InputType(int i) const;

  const onnx::NodeProto& node_;
  int64_t opset_;
  int op_version_;
  const AdapterLookup& lookup_;
  std::deque<onnx::NodeProto> emitted_;  // a deque: references stay valid as it grows
};

using OpsetAdapterFn = absl::Status (*)(OpsetAdapterContext& ctx);

struct OpsetAdapter {
  std::string op_type;
  int first_version = 0;  // inclusive range of ONNX op versions
  int last_version = 0;
  std::string canonical;  // what comes out, for docs: "Squeeze-13 (axes input)"
  OpsetAdapterFn fn = nullptr;
};

class OpsetAdapterTable {
 public:
  // InvalidArgument when the range overlaps one already registered for the
  // same op type.
  absl::Status Register(OpsetAdapter adapter);
  // The adapter covering `op_version` of `op_type`, or null (the node is
  // already in canonical form).
  const OpsetAdapter* Find(std::string_view op_type, int op_version) const;
  const std::vector<OpsetAdapter>& all() const { return adapters_; }

 private:
  std::vector<OpsetAdapter> adapters_;
};

// Adds ged's adapters for the default ONNX domain.
void RegisterOnnxOpsetAdapters(OpsetAdapterTable& table);

// The table with RegisterOnnxOpsetAdapters applied, built on first use.
const OpsetAdapterTable& BuiltinOpsetAdapters();

// Proto helpers the adapters share.
const onnx::AttributeProto* FindAttribute(const onnx::NodeProto& node, std::string_view name);
bool RemoveAttribute(onnx::NodeProto& node, std::string_view name);
void SetIntAttribute(onnx::NodeProto& node, std::string_view name, int64_t value);
void SetStringAttribute(onnx::NodeProto& node, std::string_view name, std::string_view value);
// Sets input `i`, padding skipped optional inputs with "".
void SetInput(onnx::NodeProto& node, int i, std::string_view tensor);

}  // namespace ge::frontend
