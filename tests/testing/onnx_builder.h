// Helpers for building ONNX models in tests with onnx's protobuf API, shared by
// the unit, integration, adversarial and reliability tests (header-only: the
// tests that include it link onnx_proto already).
#pragma once

#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "base/tensor.h"
#include "compiler/frontend/onnx_tensor.h"
#include "onnx/onnx_pb.h"

namespace ge::onnx_builder {

inline constexpr int32_t kF32 = onnx::TensorProto::FLOAT;
inline constexpr int32_t kI64 = onnx::TensorProto::INT64;
inline constexpr int32_t kBool = onnx::TensorProto::BOOL;

// A model importing `opset` of the default domain, with an empty graph "g".
inline onnx::ModelProto MakeModel(int64_t opset, int64_t ir_version = 8) {
  onnx::ModelProto model;
  model.set_ir_version(ir_version);
  model.set_producer_name("ged-test");
  auto* imp = model.add_opset_import();
  imp->set_domain("");
  imp->set_version(opset);
  model.mutable_graph()->set_name("g");
  return model;
}

// Sets a tensor type; a dim of -1 gets the name params[i] where one is
// given (a symbolic dim, e.g. "batch"), else neither value nor param.
inline void SetTensorType(onnx::TypeProto* type, int32_t elem, const std::vector<int64_t>& dims,
                          const std::vector<std::string>& params = {}) {
  auto* t = type->mutable_tensor_type();
  t->set_elem_type(elem);
  auto* shape = t->mutable_shape();
  for (size_t i = 0; i < dims.size(); ++i) {
    auto* dim = shape->add_dim();
    if (dims[i] >= 0) {
      dim->set_dim_value(dims[i]);
    } else if (i < params.size() && !params[i].empty()) {
      dim->set_dim_param(params[i]);
    }
  }
}

inline onnx::ValueInfoProto* AddInput(onnx::GraphProto* g, const std::string& name, int32_t elem,
                                      const std::vector<int64_t>& dims, const std::vector<std::string>& params = {}) {
  auto* v = g->add_input();
  v->set_name(name);
  SetTensorType(v->mutable_type(), elem, dims, params);
  return v;
}

inline onnx::ValueInfoProto* AddOutput(onnx::GraphProto* g, const std::string& name, int32_t elem,
                                       const std::vector<int64_t>& dims, const std::vector<std::string>& params = {}) {
  auto* v = g->add_output();
  v->set_name(name);
  SetTensorType(v->mutable_type(), elem, dims, params);
  return v;
}

// An output of known rank whose dims are left to inference (libonnx 1.12's
// checker requires a shape on the main graph's values).
inline onnx::ValueInfoProto* AddOutputOfRank(onnx::GraphProto* g, const std::string& name, int32_t elem, int rank) {
  return AddOutput(g, name, elem, std::vector<int64_t>(rank, -1));
}

inline onnx::NodeProto* AddNode(onnx::GraphProto* g, const std::string& op_type, const std::vector<std::string>& inputs,
                                const std::vector<std::string>& outputs, const std::string& name = "") {
  auto* n = g->add_node();
  n->set_op_type(op_type);
  n->set_name(name);
  for (const auto& i : inputs) n->add_input(i);
  for (const auto& o : outputs) n->add_output(o);
  return n;
}

inline onnx::AttributeProto* NewAttr(onnx::NodeProto* n, const std::string& name,
                                     onnx::AttributeProto::AttributeType type) {
  auto* a = n->add_attribute();
  a->set_name(name);
  a->set_type(type);
  return a;
}
inline void AttrInt(onnx::NodeProto* n, const std::string& name, int64_t v) {
  NewAttr(n, name, onnx::AttributeProto::INT)->set_i(v);
}
inline void AttrFloat(onnx::NodeProto* n, const std::string& name, float v) {
  NewAttr(n, name, onnx::AttributeProto::FLOAT)->set_f(v);
}
inline void AttrString(onnx::NodeProto* n, const std::string& name, const std::string& v) {
  NewAttr(n, name, onnx::AttributeProto::STRING)->set_s(v);
}
inline void AttrInts(onnx::NodeProto* n, const std::string& name, const std::vector<int64_t>& v) {
  auto* a = NewAttr(n, name, onnx::AttributeProto::INTS);
  for (int64_t x : v) a->add_ints(x);
}
inline void AttrFloats(onnx::NodeProto* n, const std::string& name, const std::vector<float>& v) {
  auto* a = NewAttr(n, name, onnx::AttributeProto::FLOATS);
  for (float x : v) a->add_floats(x);
}
inline void AttrTensor(onnx::NodeProto* n, const std::string& name, const onnx::TensorProto& t) {
  *NewAttr(n, name, onnx::AttributeProto::TENSOR)->mutable_t() = t;
}
inline onnx::GraphProto* AttrGraph(onnx::NodeProto* n, const std::string& name) {
  return NewAttr(n, name, onnx::AttributeProto::GRAPH)->mutable_g();
}

inline onnx::TensorProto* AddInitializer(onnx::GraphProto* g, const std::string& name, const Tensor& value) {
  auto* t = g->add_initializer();
  *t = frontend::TensorToProto(value, name);
  return t;
}

inline onnx::TensorProto FloatTensorProto(const std::string& name, const std::vector<float>& v,
                                          const std::vector<int64_t>& dims) {
  onnx::TensorProto t;
  t.set_name(name);
  t.set_data_type(kF32);
  for (int64_t d : dims) t.add_dims(d);
  for (float x : v) t.add_float_data(x);
  return t;
}

inline onnx::TensorProto* AddFloatInitializer(onnx::GraphProto* g, const std::string& name, const std::vector<float>& v,
                                              const std::vector<int64_t>& dims) {
  auto* t = g->add_initializer();
  *t = FloatTensorProto(name, v, dims);
  return t;
}

// A one-node model at opset 17: Y = `op_type`(X), both f32 of `dims`
// (symbolic dims named by `params`, see SetTensorType); the graph and the
// node are named `name`.
inline onnx::ModelProto UnaryModel(const std::string& op_type, const std::string& name,
                                   const std::vector<int64_t>& dims, const std::vector<std::string>& params = {}) {
  onnx::ModelProto model = MakeModel(17);
  onnx::GraphProto* g = model.mutable_graph();
  g->set_name(name);
  AddInput(g, "X", kF32, dims, params);
  AddOutput(g, "Y", kF32, dims, params);
  AddNode(g, op_type, {"X"}, {"Y"}, name);
  return model;
}

// Y = X + W at opset 17, X, W and Y f32[4]; the graph and the node are
// named "add".
inline onnx::ModelProto AddWeightModel(const std::vector<float>& w) {
  onnx::ModelProto model = MakeModel(17);
  onnx::GraphProto* g = model.mutable_graph();
  g->set_name("add");
  AddInput(g, "X", kF32, {4});
  AddOutput(g, "Y", kF32, {4});
  AddFloatInitializer(g, "W", w, {4});
  AddNode(g, "Add", {"X", "W"}, {"Y"}, "add");
  return model;
}

inline std::string Serialize(const onnx::ModelProto& model) {
  std::string bytes;
  model.SerializeToString(&bytes);
  return bytes;
}

// A fresh directory under the system temp dir, removed by the destructor.
class TempDir {
 public:
  TempDir() {
    std::string pattern = (std::filesystem::temp_directory_path() / "ged_frontend_XXXXXX").string();
    char* made = mkdtemp(pattern.data());
    path_ = made != nullptr ? std::filesystem::path(made) : std::filesystem::path();
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  const std::filesystem::path& path() const { return path_; }
  std::string Write(const std::string& rel, const std::string& bytes) const {
    const auto full = path_ / rel;
    std::filesystem::create_directories(full.parent_path());
    std::ofstream(full, std::ios::binary) << bytes;
    return full.string();
  }

 private:
  std::filesystem::path path_;
};

}  // namespace ge::onnx_builder
