// Attribute conversion. ged's AttrValue has no TypeProto kind, so the
// Optional op's `type` attribute travels as the ValueType text form, which
// ir::ValueType::Parse reads back.
#include "compiler/frontend/onnx_attr_convert.h"

#include <string>
#include <vector>

#include "base/status.h"
#include "compiler/frontend/onnx_tensor.h"

namespace ge::frontend {
namespace {

using Attr = onnx::AttributeProto;

absl::StatusOr<std::string> TypeText(const onnx::TypeProto& type, const std::string& label) {
  GE_ASSIGN_OR_RETURN(ir::ValueType value_type, OnnxTypeToValueType(type, label));
  return value_type.ToString();
}

absl::StatusOr<std::vector<Tensor>> ConvertTensors(const Attr& attr, const std::string& label) {
  std::vector<Tensor> tensors;
  for (const auto& t : attr.tensors()) {
    GE_ASSIGN_OR_RETURN(Tensor tensor, TensorFromProto(t, label));
    tensors.push_back(std::move(tensor));
  }
  return tensors;
}

absl::StatusOr<std::vector<std::string>> ConvertTypes(const Attr& attr, const std::string& label) {
  std::vector<std::string> types;
  for (const auto& tp : attr.type_protos()) {
    GE_ASSIGN_OR_RETURN(std::string text, TypeText(tp, label));
    types.push_back(std::move(text));
  }
  return types;
}

}  // namespace

absl::StatusOr<ir::AttrValue> ConvertAttribute(const onnx::AttributeProto& attr,
                                               std::string_view node_label) {
  const std::string label = StrCat("attribute '", attr.name(), "' of ", node_label);
  if (!attr.ref_attr_name().empty()) {
    return InvalidArgument(label, ": refers to function attribute '", attr.ref_attr_name(),
                           "'; attribute references are valid only inside functions");
  }
  switch (attr.type()) {
    case Attr::FLOAT:
      return ir::AttrValue(attr.f());
    case Attr::INT:
      return ir::AttrValue(static_cast<int64_t>(attr.i()));
    case Attr::STRING:
      return ir::AttrValue(attr.s());
    case Attr::TENSOR: {
      GE_ASSIGN_OR_RETURN(Tensor t, TensorFromProto(attr.t(), label));
      return ir::AttrValue(std::move(t));
    }
    case Attr::FLOATS:
      return ir::AttrValue(std::vector<float>(attr.floats().begin(), attr.floats().end()));
    case Attr::INTS:
      return ir::AttrValue(std::vector<int64_t>(attr.ints().begin(), attr.ints().end()));
    case Attr::STRINGS:
      return ir::AttrValue(std::vector<std::string>(attr.strings().begin(), attr.strings().end()));
    case Attr::TENSORS: {
      GE_ASSIGN_OR_RETURN(std::vector<Tensor> tensors, ConvertTensors(attr, label));
      return ir::AttrValue(std::move(tensors));
    }
    case Attr::TYPE_PROTO: {
      GE_ASSIGN_OR_RETURN(std::string text, TypeText(attr.tp(), label));
      return ir::AttrValue(std::move(text));
    }
    case Attr::TYPE_PROTOS: {
      GE_ASSIGN_OR_RETURN(std::vector<std::string> texts, ConvertTypes(attr, label));
      return ir::AttrValue(std::move(texts));
    }
    case Attr::SPARSE_TENSOR:
    case Attr::SPARSE_TENSORS:
      return InvalidArgument(label, ": sparse tensors are not supported");
    case Attr::GRAPH:
    case Attr::GRAPHS:
      return Internal(label, ": graph attributes are converted by the importer");
    default:
      return InvalidArgument(label, ": has no (or an unknown) attribute type ",
                             static_cast<int>(attr.type()));
  }
}

absl::StatusOr<Tensor> ConstantNodeValue(const onnx::NodeProto& node, std::string_view node_label) {
  if (node.attribute_size() != 1) {
    return InvalidArgument(node_label, ": a Constant needs exactly one value attribute, found ",
                           node.attribute_size());
  }
  const Attr& attr = node.attribute(0);
  const std::string label = StrCat("attribute '", attr.name(), "' of ", node_label);
  const std::string& name = attr.name();
  auto one_d = [](size_t n) { return Shape{static_cast<int64_t>(n)}; };
  if (name == "value" && attr.has_t()) return TensorFromProto(attr.t(), label);
  if (name == "value_float") return Tensor::Scalar<float>(attr.f());
  if (name == "value_int") return Tensor::Scalar<int64_t>(attr.i());
  if (name == "value_string") return Tensor::Scalar<std::string>(attr.s());
  if (name == "value_floats") {
    std::vector<float> v(attr.floats().begin(), attr.floats().end());
    return Tensor::FromVector<float>(v, one_d(v.size()));
  }
  if (name == "value_ints") {
    std::vector<int64_t> v(attr.ints().begin(), attr.ints().end());
    return Tensor::FromVector<int64_t>(v, one_d(v.size()));
  }
  if (name == "value_strings") {
    std::vector<std::string> v(attr.strings().begin(), attr.strings().end());
    return Tensor::FromVector<std::string>(v, one_d(v.size()));
  }
  if (name == "sparse_value") {
    return InvalidArgument(label, ": sparse constants are not supported");
  }
  return InvalidArgument(label,
                         ": not a Constant value attribute (expected value, value_float(s), ",
                         "value_int(s) or value_string(s))");
}

}  // namespace ge::frontend
