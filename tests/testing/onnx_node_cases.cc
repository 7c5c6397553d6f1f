// Reading the converted ONNX node tests and running them on an engine.
#include "tests/testing/onnx_node_cases.h"

#include <cstdlib>
#include <fstream>
#include <sstream>

#include "base/io/npy.h"
#include "base/ops/op_registry.h"
#include "base/status.h"

namespace ge::test {
namespace {

// Reads "<path>[ bf16]" as a tensor; bf16 data arrives as uint16 bits.
absl::StatusOr<Tensor> ReadTensor(std::istringstream& line) {
  std::string path, marker;
  line >> path >> marker;
  GE_ASSIGN_OR_RETURN(Tensor t, io::ReadNpyFile(path));
  if (marker == "bf16") {
    if (t.dtype() != DataType::kUint16) return InvalidArgument(path, ": bf16 data must be u16 bits");
    return Tensor(DataType::kBFloat16, t.shape(), t.buffer(), t.byte_offset());
  }
  return t;
}

absl::Status ParseAttr(std::istringstream& s, ir::OpDesc& op) {
  std::string name, kind;
  s >> name >> kind;
  if (kind == "int") {
    int64_t v = 0;
    s >> v;
    op.SetAttr(name, v);
  } else if (kind == "float") {
    double v = 0;
    s >> v;
    op.SetAttr(name, static_cast<float>(v));
  } else if (kind == "string") {
    std::string v;
    std::getline(s, v);
    op.SetAttr(name, v.empty() ? v : v.substr(1));
  } else if (kind == "ints" || kind == "floats") {
    size_t n = 0;
    s >> n;
    std::vector<int64_t> ints(n);
    std::vector<float> floats(n);
    for (size_t i = 0; i < n; ++i) {
      double v = 0;
      s >> v;
      ints[i] = static_cast<int64_t>(v);
      floats[i] = static_cast<float>(v);
    }
    if (kind == "ints") {
      op.SetAttr(name, ints);
    } else {
      op.SetAttr(name, floats);
    }
  } else if (kind == "tensor") {
    GE_ASSIGN_OR_RETURN(Tensor t, ReadTensor(s));
    op.SetAttr(name, t);
  } else {
    return InvalidArgument("unknown attribute kind '", kind, "'");
  }
  return absl::OkStatus();
}

// Parses the lines of one case after its "test" line, through "end".
absl::Status ParseCase(std::istream& in, OnnxNodeCase& c) {
  std::string line;
  while (std::getline(in, line) && line != "end") {
    std::istringstream s(line);
    std::string key;
    s >> key;
    if (key == "attr") {
      GE_RETURN_IF_ERROR(ParseAttr(s, c.op));
    } else if (key == "input" || key == "output") {
      std::vector<Value>& values = key == "input" ? c.inputs : c.expected;
      if (line.find(" none") != std::string::npos && line.size() == key.size() + 5) {
        values.push_back(Value());
        continue;
      }
      GE_ASSIGN_OR_RETURN(Tensor t, ReadTensor(s));
      values.push_back(Value(t));
    } else {
      return InvalidArgument("unknown line '", line, "'");
    }
  }
  OpBuilder typed(c.op.type(), c.op.name());
  for (const auto& [name, value] : c.op.attrs()) typed.Attr(name, value);
  typed.Inputs(c.inputs).Outputs(static_cast<int>(c.expected.size()));
  c.op = typed.Build();
  return absl::OkStatus();
}

}  // namespace

std::string OnnxNodeDataDir() {
  const char* dir = std::getenv("GED_BINARY_DIR");
  return dir == nullptr ? std::string() : std::string(dir) + "/testdata/onnx_node";
}

absl::StatusOr<std::vector<OnnxNodeCase>> LoadOnnxNodeCases(const std::string& dir) {
  const std::string path = dir + "/manifest.txt";
  std::ifstream in(path);
  if (!in) return NotFound("cannot open ", path);
  std::vector<OnnxNodeCase> cases;
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty()) continue;
    std::istringstream s(line);
    std::string key, name, type;
    OnnxNodeCase c;
    s >> key >> name >> type >> c.since_version;
    if (key != "test") return InvalidArgument(path, ": expected a test line, got '", line, "'");
    c.name = name;
    c.op = ir::OpDesc(name, type);
    absl::Status status = ParseCase(in, c);
    if (!status.ok()) return Annotate(status, StrCat(path, ": ", name));
    cases.push_back(std::move(c));
  }
  return cases;
}

OnnxNodeResult RunOnnxNodeCase(const engine::Engine& engine, const OnnxNodeCase& c,
                               Tolerance tolerance) {
  using Outcome = OnnxNodeResult::Outcome;
  const ops::OpSchema* schema = ops::OpRegistry::Global().Find(c.op.type());
  if (schema == nullptr) return {Outcome::kUnsupported, StrCat("ged has no op ", c.op.type())};
  if (schema->since_version != c.since_version) {
    return {Outcome::kOtherOpset, StrCat("opset version ", c.since_version, " vs ged's ",
                                         schema->since_version)};
  }
  auto outputs = RunKernel(engine, c.op, c.inputs);
  if (!outputs.ok()) {
    const bool unsupported = outputs.status().code() == absl::StatusCode::kUnimplemented;
    return {unsupported ? Outcome::kUnsupported : Outcome::kFailed, outputs.status().ToString()};
  }
  const bool random = schema->stateful && schema->FindAttr("seed") != nullptr;
  for (size_t i = 0; i < c.expected.size(); ++i) {
    if (!c.expected[i].is_tensor()) continue;
    const Tensor& expected = c.expected[i].tensor();
    if (random) {
      const Tensor& actual = (*outputs)[i].tensor();
      if (actual.dtype() != expected.dtype() || actual.shape() != expected.shape()) {
        return {Outcome::kMismatch,
                StrCat("output ", i, ": ", DataTypeName(actual.dtype()), actual.shape().ToString(), " vs expected ",
                       DataTypeName(expected.dtype()), expected.shape().ToString())};
      }
      continue;
    }
    // 16-bit results get their own precision's tolerance (about one ulp):
    // onnx 1.12's reference rounds float to bfloat16 by truncation, ged to
    // nearest even.
    Tolerance tol = IsFloatingPoint(expected.dtype()) ? tolerance : Tolerance{0, 0};
    if (expected.dtype() == DataType::kFloat16 || expected.dtype() == DataType::kBFloat16) {
      tol = DefaultTolerance(expected.dtype());
    }
    const ::testing::AssertionResult r = TensorNear((*outputs)[i].tensor(), expected, tol);
    if (!r) return {Outcome::kMismatch, StrCat("output ", i, ": ", r.message())};
  }
  if (random) return {Outcome::kRandom, "dtypes and shapes match; values are random draws"};
  return {Outcome::kPassed, ""};
}

}  // namespace ge::test
