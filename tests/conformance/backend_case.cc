// Loading and running one ONNX backend test through import -> compile ->
// execute, and comparing values with the suite's rules.
#include "tests/conformance/backend_case.h"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "base/status.h"
#include "base/strings.h"
#include "compiler/frontend/onnx_importer.h"
#include "compiler/frontend/onnx_tensor.h"
#include "onnx/onnx-data.pb.h"
#include "session/session.h"

namespace ge::conformance {
namespace {

namespace fs = std::filesystem;

absl::StatusOr<std::string> ReadBytes(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return NotFound("cannot open ", path.string());
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

// The tensor dtype inside a (possibly nested) sequence or optional type.
absl::StatusOr<DataType> ElementDtype(const onnx::TypeProto& type, std::string_view context) {
  if (type.has_tensor_type()) return frontend::DataTypeFromOnnx(type.tensor_type().elem_type(), context);
  if (type.has_sequence_type()) return ElementDtype(type.sequence_type().elem_type(), context);
  if (type.has_optional_type()) return ElementDtype(type.optional_type().elem_type(), context);
  return InvalidArgument(context, ": unsupported value type");
}

absl::StatusOr<Value> SequenceValue(const onnx::SequenceProto& seq, const onnx::TypeProto& type,
                                    std::string_view context) {
  if (seq.elem_type() != onnx::SequenceProto::TENSOR && seq.tensor_values_size() == 0 &&
      seq.elem_type() != onnx::SequenceProto::UNDEFINED) {
    return Unimplemented(context, ": sequences of non-tensors");
  }
  std::vector<Tensor> items;
  for (const onnx::TensorProto& t : seq.tensor_values()) {
    GE_ASSIGN_OR_RETURN(Tensor item, frontend::TensorFromProto(t, context));
    items.push_back(std::move(item));
  }
  GE_ASSIGN_OR_RETURN(DataType dtype, ElementDtype(type, context));
  return Value::Sequence(std::move(items), dtype);
}

// Reads a data file as the value kind `type` declares (TensorProto,
// SequenceProto or OptionalProto, as the suite's runner does).
absl::StatusOr<Value> ReadValue(const fs::path& path, const onnx::TypeProto& type) {
  GE_ASSIGN_OR_RETURN(std::string bytes, ReadBytes(path));
  const std::string context = path.filename().string();
  if (type.has_sequence_type()) {
    onnx::SequenceProto seq;
    if (!seq.ParseFromString(bytes)) return InvalidArgument(context, ": not a SequenceProto");
    return SequenceValue(seq, type, context);
  }
  if (type.has_optional_type()) {
    onnx::OptionalProto opt;
    if (!opt.ParseFromString(bytes)) return InvalidArgument(context, ": not an OptionalProto");
    if (opt.has_tensor_value()) return frontend::TensorFromProto(opt.tensor_value(), context);
    if (opt.has_sequence_value()) {
      return SequenceValue(opt.sequence_value(), type.optional_type().elem_type(), context);
    }
    return Value();
  }
  onnx::TensorProto tensor;
  if (!tensor.ParseFromString(bytes)) return InvalidArgument(context, ": not a TensorProto");
  GE_ASSIGN_OR_RETURN(Tensor t, frontend::TensorFromProto(tensor, context));
  // onnx 1.12's generator stores some bfloat16 data as uint16 protos; the
  // model's declared type says what the bits are (its runner reads them so).
  if (t.dtype() == DataType::kUint16 && type.tensor_type().elem_type() == onnx::TensorProto::BFLOAT16) {
    return Tensor(DataType::kBFloat16, t.shape(), t.buffer(), t.byte_offset());
  }
  return t;
}

absl::StatusOr<std::vector<Value>> ReadValues(const fs::path& dir, std::string_view prefix,
                                              const google::protobuf::RepeatedPtrField<onnx::ValueInfoProto>& infos) {
  std::vector<Value> values;
  for (int i = 0;; ++i) {
    const fs::path path = dir / StrCat(prefix, "_", i, ".pb");
    if (!fs::exists(path)) break;
    if (i >= infos.size()) return InvalidArgument(path.string(), ": more data files than graph ", prefix, "s");
    GE_ASSIGN_OR_RETURN(Value v, ReadValue(path, infos[i].type()));
    values.push_back(std::move(v));
  }
  return values;
}

Tolerances ReadTolerances(const fs::path& dir) {
  Tolerances tol;
  auto json = ReadBytes(dir / "data.json");
  if (!json.ok()) return tol;
  for (auto [key, field] : {std::pair{"\"rtol\"", &tol.rtol}, std::pair{"\"atol\"", &tol.atol}}) {
    const size_t at = json->find(key);
    if (at == std::string::npos) continue;
    const size_t colon = json->find(':', at);
    if (colon != std::string::npos) *field = std::strtod(json->c_str() + colon + 1, nullptr);
  }
  return tol;
}

std::string_view KindName(const Value& v) {
  return v.is_none() ? "none" : v.is_tensor() ? "tensor" : "sequence";
}

absl::Status CompareTensors(const Tensor& actual, const Tensor& expected, const Tolerances& tol) {
  if (actual.dtype() != expected.dtype()) {
    return InvalidArgument("dtype ", DataTypeName(actual.dtype()), " vs expected ", DataTypeName(expected.dtype()));
  }
  if (actual.shape() != expected.shape()) {
    return InvalidArgument("shape ", actual.shape().ToString(), " vs expected ", expected.shape().ToString());
  }
  const int64_t n = expected.NumElements();
  int64_t differ = 0, first = -1;
  for (int64_t i = 0; i < n; ++i) {
    bool same;
    if (expected.dtype() == DataType::kString) {
      same = actual.data<std::string>()[i] == expected.data<std::string>()[i];
    } else if (IsInteger(expected.dtype()) || expected.dtype() == DataType::kBool) {
      same = actual.GetAsInt64(i) == expected.GetAsInt64(i);
    } else {
      const double a = actual.GetAsDouble(i), e = expected.GetAsDouble(i);
      same = (std::isnan(a) && std::isnan(e)) || a == e ||
             (std::isfinite(e) && std::abs(a - e) <= tol.atol + tol.rtol * std::abs(e));
    }
    if (!same && differ++ == 0) first = i;
  }
  if (differ == 0) return absl::OkStatus();
  std::string a, e;
  if (expected.dtype() == DataType::kString) {
    a = "\"" + actual.data<std::string>()[first] + "\"";
    e = "\"" + expected.data<std::string>()[first] + "\"";
  } else {
    a = StrCat(actual.GetAsDouble(first));
    e = StrCat(expected.GetAsDouble(first));
  }
  return InvalidArgument(differ, " of ", n, " values differ; first at flat index ", first, ": ", a,
                         " vs expected ", e);
}

absl::Status RunDataSet(session::Session& session, const onnx::ModelProto& model, const fs::path& data,
                        const Tolerances& tol) {
  GE_ASSIGN_OR_RETURN(std::vector<Value> inputs, ReadValues(data, "input", model.graph().input()));
  GE_ASSIGN_OR_RETURN(std::vector<Value> expected, ReadValues(data, "output", model.graph().output()));
  auto outputs = session.RunGraph(0, std::move(inputs));
  if (!outputs.ok()) return Annotate(outputs.status(), "run");
  if (outputs->size() != expected.size()) {
    return InvalidArgument("run gave ", outputs->size(), " outputs, expected ", expected.size());
  }
  for (size_t i = 0; i < expected.size(); ++i) {
    absl::Status s = CompareValues((*outputs)[i], expected[i], tol);
    if (!s.ok()) {
      return InvalidArgument(data.filename().string(), " output ", i, " (", model.graph().output(i).name(),
                             "): ", s.message());
    }
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<std::vector<BackendTest>> ListBackendTests(const std::string& root) {
  std::vector<BackendTest> tests;
  for (const char* kind : {"node", "simple"}) {
    const fs::path dir = fs::path(root) / kind;
    std::error_code ec;
    if (!fs::is_directory(dir, ec)) return NotFound("no backend test directory ", dir.string());
    for (const fs::directory_entry& e : fs::directory_iterator(dir)) {
      if (e.is_directory() && fs::exists(e.path() / "model.onnx")) {
        tests.push_back({e.path().filename().string(), kind, e.path().string()});
      }
    }
  }
  std::sort(tests.begin(), tests.end(),
            [](const BackendTest& a, const BackendTest& b) { return a.name < b.name; });
  return tests;
}

absl::Status CompareValues(const Value& actual, const Value& expected, const Tolerances& tolerances) {
  if (actual.kind() != expected.kind()) {
    return InvalidArgument("a ", KindName(actual), " vs expected ", KindName(expected));
  }
  if (expected.is_tensor()) return CompareTensors(actual.tensor(), expected.tensor(), tolerances);
  if (!expected.is_sequence()) return absl::OkStatus();
  if (actual.sequence().size() != expected.sequence().size()) {
    return InvalidArgument("sequence of ", actual.sequence().size(), " vs expected ", expected.sequence().size());
  }
  for (size_t j = 0; j < expected.sequence().size(); ++j) {
    absl::Status s = CompareTensors(actual.sequence()[j], expected.sequence()[j], tolerances);
    if (!s.ok()) return InvalidArgument("sequence item ", j, ": ", s.message());
  }
  return absl::OkStatus();
}

absl::Status RunBackendTest(const BackendTest& test, const engine::EngineRegistry& engines, ThreadPool* pool) {
  const fs::path dir(test.dir);
  GE_ASSIGN_OR_RETURN(std::string bytes, frontend::ReadOnnxFile((dir / "model.onnx").string()));
  GE_ASSIGN_OR_RETURN(onnx::ModelProto model, frontend::ParseOnnxModel(bytes, "model.onnx"));
  auto graph = frontend::ImportOnnxModel(model, test.dir);
  if (!graph.ok()) return Annotate(graph.status(), "import");
  session::Session session(engines, OptionMap(), pool);
  GE_RETURN_IF_ERROR(session.AddGraph(0, std::move(*graph)));
  absl::Status compiled = session.CompileGraph(0);
  if (!compiled.ok()) return Annotate(compiled, "compile");
  const Tolerances tol = ReadTolerances(dir);
  std::vector<fs::path> data_sets;
  for (const fs::directory_entry& e : fs::directory_iterator(dir)) {
    if (e.is_directory() && e.path().filename().string().rfind("test_data_set_", 0) == 0) {
      data_sets.push_back(e.path());
    }
  }
  std::sort(data_sets.begin(), data_sets.end());
  if (data_sets.empty()) return NotFound("no test_data_set_* in ", test.dir);
  for (const fs::path& data : data_sets) GE_RETURN_IF_ERROR(RunDataSet(session, model, data, tol));
  return absl::OkStatus();
}

}  // namespace ge::conformance
