// cpu_vector conformance generators: reductions and data movement.
#include <algorithm>
#include <cmath>
#include <numeric>

#include "runtime/engines/cpu_vector/gather_elements.h"
#include "tests/unit/runtime/engines/conformance/vector_cases.h"

namespace ge::engine::conformance {
namespace {

Tensor I64s(const std::vector<int64_t>& v) { return Tensor::FromVector<int64_t>(v, Shape{static_cast<int64_t>(v.size())}); }

// A random subset of [0, rank) as axes, some negative; maybe empty.
std::vector<int64_t> RandomAxes(Rng& rng, int64_t rank) {
  std::vector<int64_t> axes;
  for (int64_t d = 0; d < rank; ++d) {
    if (rng.Bool()) axes.push_back(rng.Bool() ? d : d - rank);
  }
  return axes;
}

VectorCaseGenerator Reduce(std::string type, double lo, double hi) {
  return [=](Rng& rng, DataType dtype) -> std::optional<Case> {
    const Shape shape = RandomShape(rng, 1, 4, 7);
    const std::vector<int64_t> axes = RandomAxes(rng, shape.rank());
    ir::AttrMap attrs = {{"keepdims", ir::AttrValue(int64_t{rng.Bool() ? 1 : 0})}};
    if (type == "ReduceSum" && rng.Int(0, 3) == 0) attrs["noop_with_empty_axes"] = ir::AttrValue(int64_t{1});
    std::vector<Value> inputs = {Values(rng, dtype, shape, lo, hi)};
    if (type == "ReduceSum") {
      inputs.emplace_back(I64s(axes));
    } else if (!axes.empty()) {
      attrs["axes"] = ir::AttrValue(axes);
    }
    std::optional<test::Tolerance> tol;
    if (dtype == DataType::kFloat16) tol = test::Tolerance{2e-2, 2e-2};
    return cpu_dense::MakeCase(type, std::move(inputs), attrs, tol);
  };
}

}  // namespace

void AddReduceAndMovementCases(VectorCaseTable& t) {
  for (const char* type : {"ReduceSum", "ReduceMean", "ReduceMax", "ReduceMin", "ReduceL1", "ReduceL2",
                           "ReduceSumSquare", "ReduceLogSumExp"}) {
    t[type] = Reduce(type, -2.0, 2.0);
  }
  t["ReduceProd"] = Reduce("ReduceProd", 0.5, 1.5);
  t["ReduceLogSum"] = Reduce("ReduceLogSum", 0.1, 2.0);

  t["Transpose"] = [](Rng& rng, DataType dtype) -> std::optional<Case> {
    const Shape shape = RandomShape(rng, 1, 5, 6);
    std::vector<int64_t> perm(shape.rank());
    std::iota(perm.begin(), perm.end(), 0);
    std::shuffle(perm.begin(), perm.end(), std::mt19937_64(rng.Seed()));
    ir::AttrMap attrs;
    if (rng.Int(0, 4) != 0) attrs["perm"] = ir::AttrValue(perm);
    return cpu_dense::MakeCase("Transpose", {Values(rng, dtype, shape)}, attrs);
  };
  t["Slice"] = [](Rng& rng, DataType dtype) -> std::optional<Case> {
    const Shape shape = RandomShape(rng, 1, 4, 8);
    std::vector<int64_t> starts, ends, axes, steps;
    for (int64_t d = 0; d < shape.rank(); ++d) {
      if (rng.Int(0, 2) == 0) continue;
      const int64_t n = shape.dim(d);
      axes.push_back(rng.Bool() ? d : d - shape.rank());
      const int64_t step = rng.Pick(std::vector<int64_t>{1, 1, 2, 3, -1, -2});
      steps.push_back(step);
      starts.push_back(rng.Int(-n - 2, n + 2));
      ends.push_back(rng.Int(0, 5) == 0 ? (step > 0 ? INT64_MAX : INT64_MIN) : rng.Int(-n - 2, n + 2));
    }
    std::vector<Value> inputs = {Values(rng, dtype, shape), I64s(starts), I64s(ends), I64s(axes), I64s(steps)};
    return cpu_dense::MakeCase("Slice", std::move(inputs));
  };
  t["Expand"] = [](Rng& rng, DataType dtype) -> std::optional<Case> {
    const Shape out = RandomShape(rng, 0, 4, 5);
    const Shape in = BroadcastFrom(rng, out);
    return cpu_dense::MakeCase("Expand", {Values(rng, dtype, in), I64s(std::vector<int64_t>(out.span().begin(), out.span().end()))});
  };
  t["Concat"] = [](Rng& rng, DataType dtype) -> std::optional<Case> {
    const Shape base = RandomShape(rng, 1, 4, 5, false);
    const int64_t axis = rng.Int(0, base.rank() - 1);
    std::vector<Value> inputs;
    const int n = static_cast<int>(rng.Int(1, 4));
    for (int i = 0; i < n; ++i) {
      Shape s = base;
      s.set_dim(axis, rng.Int(0, 4));
      inputs.emplace_back(Values(rng, dtype, s));
    }
    return cpu_dense::MakeCase("Concat", std::move(inputs), {{"axis", ir::AttrValue(rng.Bool() ? axis : axis - base.rank())}});
  };
  t["Split"] = [](Rng& rng, DataType dtype) -> std::optional<Case> {
    const Shape shape = RandomShape(rng, 1, 4, 6, false);
    const int64_t axis = rng.Int(0, shape.rank() - 1);
    std::vector<int64_t> split;
    int64_t left = shape.dim(axis);
    while (left > 0) {
      const int64_t part = rng.Int(0, left);
      split.push_back(part);
      left -= part;
    }
    if (split.empty()) split.push_back(0);
    return cpu_dense::MakeCase("Split", {Values(rng, dtype, shape), I64s(split)}, {{"axis", ir::AttrValue(axis)}},
                               std::nullopt, static_cast<int>(split.size()));
  };
  t["Gather"] = [](Rng& rng, DataType dtype) -> std::optional<Case> {
    const Shape shape = RandomShape(rng, 1, 4, 6, false);
    const int64_t axis = rng.Int(0, shape.rank() - 1);
    const Shape ishape = RandomShape(rng, 0, 2, 4);
    const DataType itype = rng.Bool() ? DataType::kInt32 : DataType::kInt64;
    Tensor indices = rng.Random(itype, ishape, static_cast<double>(-shape.dim(axis)), static_cast<double>(shape.dim(axis) - 1));
    return cpu_dense::MakeCase("Gather", {Values(rng, dtype, shape), indices}, {{"axis", ir::AttrValue(axis)}});
  };
  // Any axis (negative too), K from 0 to the axis' extent, both directions;
  // floats rounded to integers so rows have ties.
  t["TopK"] = [](Rng& rng, DataType dtype) -> std::optional<Case> {
    const Shape shape = RandomShape(rng, 1, 4, 9);
    const int64_t axis = rng.Int(0, shape.rank() - 1);
    Tensor x = Values(rng, dtype, shape, -4.0, 4.0);
    if (dtype == DataType::kFloat || dtype == DataType::kDouble || dtype == DataType::kFloat16) {
      std::vector<double> v(static_cast<size_t>(x.NumElements()));
      for (int64_t i = 0; i < x.NumElements(); ++i) v[static_cast<size_t>(i)] = std::round(x.GetAsDouble(i));
      x = test::MakeTensor(dtype, v, shape);
    }
    const int64_t k = rng.Int(0, shape.dim(axis));
    ir::AttrMap attrs = {{"axis", ir::AttrValue(rng.Bool() ? axis : axis - shape.rank())},
                         {"largest", ir::AttrValue(int64_t{rng.Bool() ? 1 : 0})}};
    return cpu_dense::MakeCase("TopK", {x, I64s({k})}, attrs, std::nullopt, 2);
  };
  for (const char* type : {"ArgMax", "ArgMin"}) {
    t[type] = [type](Rng& rng, DataType dtype) -> std::optional<Case> {
      const Shape shape = RandomShape(rng, 1, 4, 8, false);
      const int64_t axis = rng.Int(0, shape.rank() - 1);
      Tensor x = Values(rng, dtype, shape, -3.0, 3.0);
      std::vector<double> v(static_cast<size_t>(x.NumElements()));
      for (int64_t i = 0; i < x.NumElements(); ++i) v[static_cast<size_t>(i)] = std::round(x.GetAsDouble(i));
      x = test::MakeTensor(dtype, v, shape);  // ties
      ir::AttrMap attrs = {{"axis", ir::AttrValue(rng.Bool() ? axis : axis - shape.rank())},
                           {"keepdims", ir::AttrValue(int64_t{rng.Bool() ? 1 : 0})},
                           {"select_last_index", ir::AttrValue(int64_t{rng.Bool() ? 1 : 0})}};
      return cpu_dense::MakeCase(type, {x}, attrs);
    };
  }
  // Repeated targets are likely (few positions along the axis); updates of
  // small integers so products stay exact.
  t["ScatterElements"] = [](Rng& rng, DataType dtype) -> std::optional<Case> {
    const Shape shape = RandomShape(rng, 1, 4, 6, false);
    const int64_t axis = rng.Int(0, shape.rank() - 1);
    Shape ishape = shape;
    for (int64_t d = 0; d < shape.rank(); ++d) ishape.set_dim(d, d == axis ? rng.Int(0, 7) : rng.Int(1, shape.dim(d)));
    const DataType itype = rng.Bool() ? DataType::kInt32 : DataType::kInt64;
    const double extent = static_cast<double>(shape.dim(axis));
    Tensor indices = rng.Random(itype, ishape, -extent, extent - 1);
    const char* reduction =
        dtype == DataType::kBool ? "none" : rng.Pick(std::vector<const char*>{"none", "add", "mul"});
    return cpu_dense::MakeCase("ScatterElements",
                               {Values(rng, dtype, shape, -2.0, 2.0), indices, Values(rng, dtype, ishape, -2.0, 2.0)},
                               {{"axis", ir::AttrValue(rng.Bool() ? axis : axis - shape.rank())},
                                {"reduction", ir::AttrValue(std::string(reduction))}});
  };
  t["ScatterND"] = [](Rng& rng, DataType dtype) -> std::optional<Case> {
    const Shape shape = RandomShape(rng, 1, 4, 5, false);
    const int64_t q = rng.Int(1, shape.rank());
    const int64_t tuples = rng.Int(0, 6);
    std::vector<int64_t> idx;
    for (int64_t t = 0; t < tuples; ++t) {
      for (int64_t j = 0; j < q; ++j) idx.push_back(rng.Int(-shape.dim(j), shape.dim(j) - 1));
    }
    Shape us{tuples};
    for (int64_t d = q; d < shape.rank(); ++d) us.push_back(shape.dim(d));
    const char* reduction =
        dtype == DataType::kBool ? "none" : rng.Pick(std::vector<const char*>{"none", "add", "mul", "max", "min"});
    return cpu_dense::MakeCase(
        "ScatterND",
        {Values(rng, dtype, shape), Tensor::FromVector<int64_t>(idx, Shape{tuples, q}), Values(rng, dtype, us)},
        {{"reduction", ir::AttrValue(std::string(reduction))}});
  };
  t["Tile"] = [](Rng& rng, DataType dtype) -> std::optional<Case> {
    const Shape shape = RandomShape(rng, 1, 4, 5);
    std::vector<int64_t> repeats;
    for (int64_t d = 0; d < shape.rank(); ++d) repeats.push_back(rng.Int(0, 6) == 0 ? 0 : rng.Int(1, 3));
    return cpu_dense::MakeCase("Tile", {Values(rng, dtype, shape), I64s(repeats)});
  };
  t["Trilu"] = [](Rng& rng, DataType dtype) -> std::optional<Case> {
    const Shape shape = RandomShape(rng, 2, 4, 7);
    std::vector<Value> inputs = {Values(rng, dtype, shape)};
    if (rng.Int(0, 3) != 0) inputs.emplace_back(Tensor::Scalar<int64_t>(rng.Int(-8, 8)));
    return cpu_dense::MakeCase("Trilu", std::move(inputs), {{"upper", ir::AttrValue(int64_t{rng.Bool() ? 1 : 0})}});
  };
  t["CumSum"] = [](Rng& rng, DataType dtype) -> std::optional<Case> {
    const Shape shape = RandomShape(rng, 1, 4, 8);
    const int64_t axis = rng.Int(0, shape.rank() - 1);
    const Tensor a = rng.Bool() ? Tensor::Scalar<int64_t>(rng.Bool() ? axis : axis - shape.rank())
                                : Tensor::Scalar<int32_t>(static_cast<int32_t>(axis));
    return cpu_dense::MakeCase("CumSum", {Values(rng, dtype, shape), a},
                               {{"exclusive", ir::AttrValue(int64_t{rng.Bool() ? 1 : 0})},
                                {"reverse", ir::AttrValue(int64_t{rng.Bool() ? 1 : 0})}});
  };
  // Indices of data's rank, at most data's extent on the other axes (any
  // extent, empty included, on the gathered one), negative ones too.
  t["GatherElements"] = [](Rng& rng, DataType dtype) -> std::optional<Case> {
    const Shape shape = RandomShape(rng, 1, 4, 6, false);
    const int64_t axis = rng.Int(0, shape.rank() - 1);
    Shape ishape = shape;
    for (int64_t d = 0; d < shape.rank(); ++d) ishape.set_dim(d, d == axis ? rng.Int(0, 7) : rng.Int(1, shape.dim(d)));
    const DataType itype = rng.Bool() ? DataType::kInt32 : DataType::kInt64;
    Tensor indices =
        rng.Random(itype, ishape, static_cast<double>(-shape.dim(axis)), static_cast<double>(shape.dim(axis) - 1));
    const int64_t written = rng.Bool() ? axis : axis - shape.rank();
    return cpu_dense::MakeCase("GatherElements", {Values(rng, dtype, shape), indices},
                               {{"axis", ir::AttrValue(written)}});
  };
  // GatherElements of two Expands, read through zero strides: the sources
  // broadcast to data_shape / indices_shape (dims of 1, leading dims
  // dropped, the gathered axis included); the reference expands both and
  // gathers on host_cpu.
  t[std::string(cpu_vector::kGatherElementsBroadcastOp)] = [](Rng& rng, DataType dtype) -> std::optional<Case> {
    const Shape data_shape = RandomShape(rng, 1, 4, 6, false);
    const int64_t rank = data_shape.rank();
    const int64_t axis = rng.Int(0, rank - 1);
    Shape indices_shape = data_shape;
    for (int64_t d = 0; d < rank; ++d) {
      indices_shape.set_dim(d, d == axis ? rng.Int(0, 7) : rng.Int(1, data_shape.dim(d)));
    }
    const Shape data_from = BroadcastFrom(rng, data_shape);
    const Shape indices_from = BroadcastFrom(rng, indices_shape);
    const DataType itype = rng.Bool() ? DataType::kInt32 : DataType::kInt64;
    const double extent = static_cast<double>(data_shape.dim(axis));
    const Tensor data = Values(rng, dtype, data_from);
    const Tensor indices = rng.Random(itype, indices_from, -extent, extent - 1);
    const auto dims = [](const Shape& s) { return std::vector<int64_t>(s.span().begin(), s.span().end()); };
    Case c = cpu_dense::MakeCase(std::string(cpu_vector::kGatherElementsBroadcastOp), {data, indices},
                                 {{"axis", ir::AttrValue(axis)},
                                  {std::string(cpu_vector::kAttrDataShape), ir::AttrValue(dims(data_shape))},
                                  {std::string(cpu_vector::kAttrIndicesShape), ir::AttrValue(dims(indices_shape))}});
    c.reference = [=]() -> absl::StatusOr<Tensor> {
      GE_ASSIGN_OR_RETURN(Tensor d, test::RunOp1(cpu_dense::Host(), "Expand", {data, I64s(dims(data_shape))}));
      GE_ASSIGN_OR_RETURN(Tensor i, test::RunOp1(cpu_dense::Host(), "Expand", {indices, I64s(dims(indices_shape))}));
      return test::RunOp1(cpu_dense::Host(), "GatherElements", {d, i}, {{"axis", ir::AttrValue(axis)}});
    };
    return c;
  };
}

}  // namespace ge::engine::conformance
