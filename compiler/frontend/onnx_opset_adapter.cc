// The opset adapter table, the context adapters emit through, and the list
// of ged's adapters (the rewrite functions live in
// onnx_opset_adapter_rules.cc). Keeping the list in one function makes the
// supported conversions reviewable at a glance.
#include "compiler/frontend/onnx_opset_adapter.h"

#include "compiler/frontend/onnx_opset_adapter_rules.h"
#include "compiler/frontend/onnx_tensor.h"

namespace ge::frontend {

OpsetAdapterContext::OpsetAdapterContext(const onnx::NodeProto& node, int64_t opset, int op_version,
                                         const AdapterLookup& lookup)
    : node_(node), opset_(opset), op_version_(op_version), lookup_(lookup) {}

onnx::NodeProto& OpsetAdapterContext::EmitCopy(std::string_view op_type) {
  onnx::NodeProto& copy = emitted_.emplace_back(node_);
  if (!op_type.empty()) copy.set_op_type(std::string(op_type));
  return copy;
}

onnx::NodeProto& OpsetAdapterContext::EmitHelper(std::string_view op_type, std::string_view role) {
  onnx::NodeProto& helper = emitted_.emplace_back();
  helper.set_op_type(std::string(op_type));
  if (!node_.name().empty()) helper.set_name(StrCat(node_.name(), "/", role));
  return helper;
}

std::string OpsetAdapterContext::EmitConstant(std::string_view role, const Tensor& value) {
  const std::string name = FreshTensorName(role);
  onnx::NodeProto& constant = EmitHelper("Constant", role);
  constant.add_output(name);
  onnx::AttributeProto* attr = constant.add_attribute();
  attr->set_name("value");
  attr->set_type(onnx::AttributeProto::TENSOR);
  *attr->mutable_t() = TensorToProto(value, name);
  return name;
}

std::string OpsetAdapterContext::FreshTensorName(std::string_view role) {
  const std::string base = node_.output_size() > 0 && !node_.output(0).empty()
                               ? StrCat(node_.output(0), "/", role)
                               : StrCat(node_.op_type(), "/", role);
  return lookup_.fresh_tensor_name ? lookup_.fresh_tensor_name(base) : base;
}

const onnx::TypeProto* OpsetAdapterContext::InputType(int i) const {
  if (i >= node_.input_size() || node_.input(i).empty() || !lookup_.type_of) return nullptr;
  return lookup_.type_of(node_.input(i));
}

std::optional<DataType> OpsetAdapterContext::InputDtype(int i) const {
  const onnx::TypeProto* type = InputType(i);
  if (type == nullptr || !type->has_tensor_type()) return std::nullopt;
  const int32_t elem = type->tensor_type().elem_type();
  if (elem <= 0 || !IsValidDataType(elem)) return std::nullopt;
  return static_cast<DataType>(elem);
}

std::optional<int64_t> OpsetAdapterContext::InputRank(int i) const {
  const onnx::TypeProto* type = InputType(i);
  if (type == nullptr || !type->has_tensor_type() || !type->tensor_type().has_shape()) {
    return std::nullopt;
  }
  return type->tensor_type().shape().dim_size();
}

std::optional<std::vector<int64_t>> OpsetAdapterContext::InputDims(int i) const {
  const onnx::TypeProto* type = InputType(i);
  if (type == nullptr || !type->has_tensor_type() || !type->tensor_type().has_shape()) {
    return std::nullopt;
  }
  std::vector<int64_t> dims;
  for (const auto& d : type->tensor_type().shape().dim()) {
    dims.push_back(d.has_dim_value() && d.dim_value() >= 0 ? d.dim_value() : -1);
  }
  return dims;
}

const onnx::TensorProto* OpsetAdapterContext::ConstantInput(int i) const {
  if (i >= node_.input_size() || node_.input(i).empty() || !lookup_.constant_of) return nullptr;
  return lookup_.constant_of(node_.input(i));
}

bool OpsetAdapterContext::IsConsumed(const std::string& tensor) const {
  return !tensor.empty() && lookup_.is_consumed && lookup_.is_consumed(tensor);
}

std::string OpsetAdapterContext::Label() const {
  const std::string who =
      node_.name().empty() ? StrCat("a node") : StrCat("node '", node_.name(), "'");
  return StrCat(who, " (", node_.op_type(), "-", op_version_, ", opset ", opset_, ")");
}

absl::Status OpsetAdapterTable::Register(OpsetAdapter adapter) {
  for (const OpsetAdapter& a : adapters_) {
    if (a.op_type == adapter.op_type && a.first_version <= adapter.last_version &&
        adapter.first_version <= a.last_version) {
      return InvalidArgument("opset adapter for ", adapter.op_type, " versions ",
                             adapter.first_version, "..", adapter.last_version, " overlaps ",
                             a.first_version, "..", a.last_version);
    }
  }
  adapters_.push_back(std::move(adapter));
  return absl::OkStatus();
}

const OpsetAdapter* OpsetAdapterTable::Find(std::string_view op_type, int op_version) const {
  for (const OpsetAdapter& a : adapters_) {
    if (a.op_type == op_type && a.first_version <= op_version && op_version <= a.last_version) {
      return &a;
    }
  }
  return nullptr;
}

void RegisterOnnxOpsetAdapters(OpsetAdapterTable& table) {
  // Versions are ONNX op versions (schema since_version); a range ends just
  // before the canonical version.
  const OpsetAdapter adapters[] = {
      {"Squeeze", 1, 12, "Squeeze-13: axes attribute -> input", &AdaptAxesAttributeToInput},
      {"Unsqueeze", 1, 12, "Unsqueeze-13: axes attribute -> input", &AdaptAxesAttributeToInput},
      {"ReduceSum", 1, 12, "ReduceSum-13: axes attribute -> input", &AdaptAxesAttributeToInput},
      {"Split", 1, 12, "Split-13: split attribute -> input", &AdaptSplit},
      {"Slice", 1, 9, "Slice-13: starts/ends/axes attributes -> inputs", &AdaptSlice1},
      {"Clip", 1, 10, "Clip-13: min/max attributes -> inputs", &AdaptClip6},
      {"Pad", 1, 10, "Pad-13: pads/value attributes -> inputs", &AdaptPad2},
      {"TopK", 1, 9, "TopK-11: k attribute -> input", &AdaptTopK1},
      {"Dropout", 1, 11, "Dropout-13: ratio attribute -> input; mask as bool", &AdaptDropout7},
      {"Softmax", 1, 12, "Softmax-13 (Flatten + Softmax + Reshape for the 2-D coercion)",
       &AdaptSoftmaxFamily},
      {"LogSoftmax", 1, 12, "LogSoftmax-13 (Flatten + LogSoftmax + Reshape)", &AdaptSoftmaxFamily},
      {"Hardmax", 1, 12, "Hardmax-13 (Flatten + Hardmax + Reshape)", &AdaptSoftmaxFamily},
      {"BatchNormalization", 1, 13, "BatchNormalization-15 (inference: spatial dropped)",
       &AdaptBatchNormalization},
      {"Upsample", 1, 17, "Resize-13 (asymmetric coordinates; nearest rounds down)",
       &AdaptUpsample},
      {"Resize", 10, 10, "Resize-13 (roi input added; asymmetric coordinates)", &AdaptResize10},
      {"Resize", 11, 12, "Resize-13 (empty scales dropped)", &AdaptResize11},
      {"Scatter", 1, 17, "ScatterElements-16", &AdaptScatter},
      {"RoiAlign", 1, 15, "RoiAlign-16 with coordinate_transformation_mode=output_half_pixel",
       &AdaptRoiAlign10},
      {"Scan", 1, 8, "rejected: Scan-8's batch axis has no Scan-16 equivalent", &RejectScan8},
  };
  for (const OpsetAdapter& a : adapters) {
    absl::Status status = table.Register(a);
    GE_CHECK_MSG(status.ok(), "duplicate built-in opset adapter");
  }
}

const OpsetAdapterTable& BuiltinOpsetAdapters() {
  static const OpsetAdapterTable* table = [] {
    auto* t = new OpsetAdapterTable();
    RegisterOnnxOpsetAdapters(*t);
    return t;
  }();
  return *table;
}

const onnx::AttributeProto* FindAttribute(const onnx::NodeProto& node, std::string_view name) {
  for (const auto& attr : node.attribute()) {
    if (attr.name() == name) return &attr;
  }
  return nullptr;
}

bool RemoveAttribute(onnx::NodeProto& node, std::string_view name) {
  auto* attrs = node.mutable_attribute();
  for (int i = 0; i < attrs->size(); ++i) {
    if (attrs->Get(i).name() == name) {
      attrs->erase(attrs->begin() + i);
      return true;
    }
  }
  return false;
}

void SetIntAttribute(onnx::NodeProto& node, std::string_view name, int64_t value) {
  RemoveAttribute(node, name);
  onnx::AttributeProto* attr = node.add_attribute();
  attr->set_name(std::string(name));
  attr->set_type(onnx::AttributeProto::INT);
  attr->set_i(value);
}

void SetStringAttribute(onnx::NodeProto& node, std::string_view name, std::string_view value) {
  RemoveAttribute(node, name);
  onnx::AttributeProto* attr = node.add_attribute();
  attr->set_name(std::string(name));
  attr->set_type(onnx::AttributeProto::STRING);
  attr->set_s(std::string(value));
}

void SetInput(onnx::NodeProto& node, int i, std::string_view tensor) {
  while (node.input_size() <= i) node.add_input("");
  node.set_input(i, std::string(tensor));
}

}  // namespace ge::frontend
