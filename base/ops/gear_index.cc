// GearIndex: the gear table, branch selection and the op's schema.
#include "base/ops/gear_index.h"

#include "absl/strings/str_join.h"
#include "base/ops/infer_util.h"
#include "base/ops/op_families.h"
#include "base/status.h"

namespace ge::ops {
namespace {

using Kind = ir::AttrValue::Kind;

constexpr std::string_view kAttrGearShapes = "gear_shapes";
constexpr std::string_view kAttrGearLabels = "gear_labels";
constexpr std::string_view kAttrGearOption = "gear_option";
constexpr std::string_view kAttrFallback = "fallback_branch";

std::string ShapesText(const std::vector<Shape>& shapes) {
  std::vector<std::string> parts;
  parts.reserve(shapes.size());
  for (const Shape& s : shapes) parts.push_back(s.ToString());
  return absl::StrJoin(parts, ", ");
}

const ir::ValueType& IndexType() {
  static const ir::ValueType* type = new ir::ValueType(ir::ValueType::Tensor(DataType::kInt32, Shape()));
  return *type;
}

absl::Status InferGearIndex(InferenceContext& ctx) {
  for (int i = 0; i < ctx.num_inputs(); ++i) {
    if (ctx.has_input(i) && !ctx.input_type(i).is_tensor()) {
      return InvalidArgument("input ", i, " is ", ctx.input_type(i).ToString(), "; gears select by tensor shapes");
    }
  }
  ctx.set_output(0, IndexType());
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<GearTable> GearTable::FromOpDesc(const ir::OpDesc& op) {
  GearTable table;
  table.num_inputs = op.num_inputs();
  auto shapes = op.GetAttr<std::vector<Shape>>(kAttrGearShapes);
  auto labels = op.GetAttr<std::vector<std::string>>(kAttrGearLabels);
  if (!shapes || !labels) {
    return InvalidArgument("node '", op.name(), "' (GearIndex) lacks '", kAttrGearShapes, "' or '", kAttrGearLabels,
                           "'");
  }
  if (table.num_inputs == 0 || labels->empty() ||
      shapes->size() != labels->size() * static_cast<size_t>(table.num_inputs)) {
    return InvalidArgument("node '", op.name(), "' (GearIndex): ", shapes->size(), " gear shapes for ", labels->size(),
                           " gears of ", table.num_inputs, " inputs");
  }
  for (size_t g = 0; g < labels->size(); ++g) {
    table.gears.emplace_back(shapes->begin() + g * table.num_inputs, shapes->begin() + (g + 1) * table.num_inputs);
  }
  table.labels = *std::move(labels);
  table.option = op.GetAttrOr<std::string>(kAttrGearOption, "");
  table.fallback_branch = op.GetAttrOr<int64_t>(kAttrFallback, -1);
  return table;
}

void GearTable::ToOpDesc(ir::OpDesc& op) const {
  std::vector<Shape> flat;
  for (const auto& gear : gears) flat.insert(flat.end(), gear.begin(), gear.end());
  op.SetAttr(kAttrGearShapes, std::move(flat));
  op.SetAttr(kAttrGearLabels, labels);
  op.SetAttr(kAttrGearOption, option);
  op.SetAttr(kAttrFallback, fallback_branch);
}

absl::StatusOr<int64_t> GearTable::Select(const std::vector<Shape>& shapes) const {
  for (size_t g = 0; g < gears.size(); ++g) {
    if (gears[g] == shapes) return static_cast<int64_t>(g);
  }
  if (fallback_branch >= 0) return fallback_branch;
  return InvalidArgument("input shape", shapes.size() == 1 ? " " : "s ", ShapesText(shapes), " fit",
                         shapes.size() == 1 ? "s" : "", " no gear of this model; the gears",
                         option.empty() ? "" : StrCat(" of ", option), " are: ", GearList(),
                         ". Compile with ge.compileHybridMode=1 to run other shapes on the dynamic graph");
}

std::string GearTable::GearList() const {
  std::vector<std::string> parts;
  parts.reserve(labels.size());
  for (size_t g = 0; g < labels.size(); ++g) {
    parts.push_back(labels[g].empty() ? ShapesText(gears[g]) : labels[g]);
  }
  return absl::StrJoin(parts, "; ");
}

void RegisterGearOps(OpRegistry& r) {
  MustRegister(r, OpSchemaBuilder(std::string(kGearIndex), 1)
                      .Doc("The Case branch of the gear whose shapes equal the inputs' shapes "
                           "(multi-batch graphs; base/ops/gear_index.h).")
                      .VariadicInput("inputs", "", 1)
                      .Output("index", "i32")
                      .OptionalAttr(std::string(kAttrGearShapes), Kind::kShapes)
                      .OptionalAttr(std::string(kAttrGearLabels), Kind::kStrings)
                      .OptionalAttr(std::string(kAttrGearOption), Kind::kString)
                      .Attr(std::string(kAttrFallback), Kind::kInt, int64_t{-1})
                      .Infer(InferGearIndex));
}

}  // namespace ge::ops
