// Gear options: parsing and resolution against the graph's inputs.
#include "compiler/gear_options.h"

#include <algorithm>
#include <set>

#include "absl/strings/numbers.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "base/status.h"
#include "base/strings.h"

namespace ge::compiler {
namespace {

struct ModeKey {
  GearMode mode;
  std::string_view key;
  std::string_view flag;
};

constexpr ModeKey kModes[] = {
    {GearMode::kBatch, "ge.dynamicBatchSize", "--dynamic_batch_size"},
    {GearMode::kImageSize, "ge.dynamicImageSize", "--dynamic_image_size"},
    {GearMode::kDims, "ge.dynamicDims", "--dynamic_dims"},
};

std::string Spelled(const ModeKey& m) { return StrCat(m.flag, " (", m.key, ")"); }

absl::StatusOr<std::vector<int64_t>> ParseInts(std::string_view text, std::string_view what, int64_t min) {
  std::vector<int64_t> out;
  for (absl::string_view piece : absl::StrSplit(AbslView(text), ',')) {
    piece = absl::StripAsciiWhitespace(piece);
    int64_t v;
    if (!absl::SimpleAtoi(piece, &v) || v < min) {
      return InvalidArgument(what, ": '", StdView(piece), "' is not an integer >= ", min);
    }
    out.push_back(v);
  }
  return out;
}

std::string Join(const std::vector<int64_t>& v) { return absl::StrJoin(v, ","); }

// The gears of one option: batch takes one value per gear ("1,4,8"); the
// others take gears separated by ';' ("224,224;256,256").
absl::StatusOr<std::vector<std::vector<int64_t>>> ParseGears(const ModeKey& m, std::string_view value) {
  std::vector<std::vector<int64_t>> gears;
  const std::string name = Spelled(m);
  if (m.mode == GearMode::kBatch) {
    GE_ASSIGN_OR_RETURN(std::vector<int64_t> sizes, ParseInts(value, name, 1));
    for (int64_t s : sizes) gears.push_back({s});
  } else {
    for (absl::string_view gear : absl::StrSplit(AbslView(value), ';', absl::SkipWhitespace())) {
      GE_ASSIGN_OR_RETURN(std::vector<int64_t> dims,
                          ParseInts(StdView(gear), StrCat(name, " gear ", gears.size()), 1));
      if (m.mode == GearMode::kImageSize && dims.size() != 2) {
        return InvalidArgument(name, " gear ", gears.size(), " (", Join(dims), ") has ", dims.size(),
                               " values; each gear is H,W");
      }
      gears.push_back(std::move(dims));
    }
  }
  if (gears.empty()) return InvalidArgument(name, " lists no gear");
  if (gears.size() > static_cast<size_t>(kMaxGears)) {
    return InvalidArgument(name, " lists ", gears.size(), " gears; at most ", kMaxGears, " are allowed");
  }
  for (size_t i = 0; i < gears.size(); ++i) {
    for (size_t j = 0; j < i; ++j) {
      if (gears[i] == gears[j]) {
        return InvalidArgument(name, " lists gear ", Join(gears[i]), " twice (gears ", j, " and ", i, ")");
      }
    }
  }
  return gears;
}

absl::StatusOr<std::vector<InputShapeOption>> ParseInputShapes(std::string_view value) {
  std::vector<InputShapeOption> out;
  for (absl::string_view entry : absl::StrSplit(AbslView(value), ';', absl::SkipWhitespace())) {
    entry = absl::StripAsciiWhitespace(entry);
    const size_t colon = entry.rfind(':');
    if (colon == absl::string_view::npos || colon == 0) {
      return InvalidArgument("--input_shape (ge.inputShape): '", StdView(entry), "' is not NAME:D0,D1,...");
    }
    InputShapeOption opt;
    opt.name = std::string(absl::StripAsciiWhitespace(entry.substr(0, colon)));
    const absl::string_view dims = absl::StripAsciiWhitespace(entry.substr(colon + 1));
    if (!dims.empty()) {
      GE_ASSIGN_OR_RETURN(std::vector<int64_t> d,
                          ParseInts(StdView(dims), StrCat("--input_shape (ge.inputShape) of '", opt.name, "'"), -1));
      opt.shape = Shape(absl::MakeConstSpan(d));
    }
    for (const InputShapeOption& seen : out) {
      if (seen.name == opt.name) return InvalidArgument("--input_shape (ge.inputShape) names '", opt.name, "' twice");
    }
    out.push_back(std::move(opt));
  }
  return out;
}

std::vector<size_t> UnknownDims(const Shape& s) {
  std::vector<size_t> out;
  if (s.unknown_rank()) return out;
  for (size_t d = 0; d < s.dims().size(); ++d) {
    if (s.dim(d) < 0) out.push_back(d);
  }
  return out;
}

struct Resolver {
  const GearOptions& options;
  const std::vector<GraphInput>& inputs;
  std::vector<Shape> user;          // by input
  std::vector<bool> from_option;    // the shape came from --input_shape
  std::vector<size_t> order;        // inputs in --input_shape order, then the rest

  std::string Where(size_t i) const { return from_option[i] ? "in --input_shape" : "in the model"; }

  std::string GearText(size_t g) const { return Join(options.gears[g]); }

  absl::Status FixedDimError(size_t g, size_t i, size_t d, int64_t value) const {
    return InvalidArgument("gear ", g, " (", GearText(g), ") of ", options.OptionName(), " sets dim ", d,
                           " of input '", inputs[i].name, "' to ", value, ", but that dim is fixed at ",
                           user[i].dim(d), " ", Where(i), " (shape ", user[i].ToString(), ")");
  }

  absl::Status NeedsKnownRank(size_t i) const {
    return InvalidArgument("input '", inputs[i].name, "' has an unknown rank; give its shape with --input_shape");
  }

  absl::StatusOr<std::vector<Shape>> Batch(size_t g) const {
    std::vector<Shape> shapes = user;
    bool any = false;
    for (size_t i = 0; i < user.size(); ++i) {
      const std::vector<size_t> unknown = UnknownDims(user[i]);
      if (user[i].unknown_rank()) return NeedsKnownRank(i);
      if (unknown.empty()) continue;
      if (unknown.front() != 0 || unknown.size() > 1) {
        return InvalidArgument("input '", inputs[i].name, "' has shape ", user[i].ToString(), " ", Where(i), "; ",
                               options.OptionName(), " sets dim 0 only, so its other dims must be known");
      }
      shapes[i].set_dim(0, options.gears[g][0]);
      any = true;
    }
    if (!any) {
      for (size_t i = 0; i < user.size(); ++i) {
        if (user[i].rank() > 0) return FixedDimError(g, i, 0, options.gears[g][0]);
      }
      return InvalidArgument(options.OptionName(), ": no input has a batch dim to set");
    }
    return shapes;
  }

  absl::StatusOr<std::vector<Shape>> ImageSize(size_t g) const {
    std::vector<Shape> shapes = user;
    bool any = false;
    for (size_t i = 0; i < user.size(); ++i) {
      if (user[i].unknown_rank()) return NeedsKnownRank(i);
      const std::vector<size_t> unknown = UnknownDims(user[i]);
      if (unknown.empty()) continue;
      const size_t rank = user[i].dims().size();
      if (rank < 2) {
        return InvalidArgument("gear ", g, " (", GearText(g), ") of ", options.OptionName(),
                               " does not fit input '", inputs[i].name, "' of rank ", rank,
                               ": H and W are its last two dims, so it needs rank 2 or more");
      }
      if (unknown.front() < rank - 2) {
        return InvalidArgument("input '", inputs[i].name, "' has shape ", user[i].ToString(), " ", Where(i), "; ",
                               options.OptionName(), " sets H and W (the last two dims) only, so dim ",
                               unknown.front(), " must be known");
      }
      for (size_t k = 0; k < 2; ++k) {
        const size_t d = rank - 2 + k;
        const int64_t v = options.gears[g][k];
        if (user[i].dim(d) >= 0 && user[i].dim(d) != v) return FixedDimError(g, i, d, v);
        shapes[i].set_dim(d, v);
      }
      any = true;
    }
    if (!any) return InvalidArgument(options.OptionName(), ": no input has an unknown H or W dim (-1) to set");
    return shapes;
  }

  absl::StatusOr<std::vector<Shape>> Dims(size_t g) const {
    std::vector<Shape> shapes = user;
    const std::vector<int64_t>& values = options.gears[g];
    size_t total_unknown = 0;
    std::vector<size_t> dynamic;  // inputs with unknown dims, in order
    for (size_t i : order) {
      if (user[i].unknown_rank()) return NeedsKnownRank(i);
      const size_t n = UnknownDims(user[i]).size();
      total_unknown += n;
      if (n > 0) dynamic.push_back(i);
    }
    if (dynamic.empty()) return InvalidArgument(options.OptionName(), ": no input has an unknown dim (-1) to set");
    if (values.size() == total_unknown) {
      size_t next = 0;
      for (size_t i : dynamic) {
        for (size_t d : UnknownDims(user[i])) shapes[i].set_dim(d, values[next++]);
      }
      return shapes;
    }
    // The leading-dims form: one dynamic input, its dims through the last -1.
    const size_t i = dynamic.front();
    const size_t rank = user[i].dims().size();
    if (dynamic.size() == 1 && values.size() > rank) {
      return InvalidArgument("gear ", g, " (", GearText(g), ") of ", options.OptionName(), " has ", values.size(),
                             " values, more than the rank ", rank, " of input '", inputs[i].name, "' (shape ",
                             user[i].ToString(), ")");
    }
    if (dynamic.size() != 1 || values.size() < UnknownDims(user[i]).back() + 1) {
      return InvalidArgument("gear ", g, " (", GearText(g), ") of ", options.OptionName(), " has ", values.size(),
                             " values; the inputs have ", total_unknown,
                             " unknown dims (-1), and each gear gives one value per unknown dim");
    }
    for (size_t d = 0; d < values.size(); ++d) {
      if (user[i].dim(d) >= 0 && user[i].dim(d) != values[d]) return FixedDimError(g, i, d, values[d]);
      shapes[i].set_dim(d, values[d]);
    }
    return shapes;
  }
};

}  // namespace

std::string GearOptions::OptionName() const {
  for (const ModeKey& m : kModes) {
    if (m.mode == mode) return Spelled(m);
  }
  return "--input_shape (ge.inputShape)";
}

absl::StatusOr<GearOptions> ParseGearOptions(const OptionMap& options) {
  GearOptions out;
  const ModeKey* chosen = nullptr;
  for (const ModeKey& m : kModes) {
    const std::string value = OptionOrDefault(options, m.key);
    if (value.empty()) continue;
    if (chosen != nullptr) {
      return InvalidArgument(Spelled(*chosen), " and ", Spelled(m), " are mutually exclusive: give one of them");
    }
    chosen = &m;
    GE_ASSIGN_OR_RETURN(out.gears, ParseGears(m, value));
    out.mode = m.mode;
  }
  GE_ASSIGN_OR_RETURN(out.input_shapes, ParseInputShapes(OptionOrDefault(options, "ge.inputShape")));
  GE_ASSIGN_OR_RETURN(out.hybrid,
                      ParseBoolOption("ge.compileHybridMode", OptionOrDefault(options, "ge.compileHybridMode")));
  if (out.hybrid && !out.enabled()) {
    return InvalidArgument("ge.compileHybridMode=1 needs gears: give --dynamic_batch_size, --dynamic_image_size or "
                           "--dynamic_dims");
  }
  return out;
}

absl::StatusOr<ResolvedGears> ResolveGears(const GearOptions& options, const std::vector<GraphInput>& inputs) {
  Resolver r{options, inputs, {}, {}, {}};
  for (const GraphInput& in : inputs) {
    r.user.push_back(in.shape);
    r.from_option.push_back(false);
  }
  std::set<size_t> ordered;
  for (const InputShapeOption& opt : options.input_shapes) {
    auto it = std::find_if(inputs.begin(), inputs.end(), [&](const GraphInput& in) { return in.name == opt.name; });
    if (it == inputs.end()) {
      std::vector<std::string> names;
      for (const GraphInput& in : inputs) names.push_back(StrCat("'", in.name, "'"));
      return InvalidArgument("--input_shape (ge.inputShape) names input '", opt.name,
                             "', which the model does not have (its inputs: ", absl::StrJoin(names, ", "), ")");
    }
    const size_t i = static_cast<size_t>(it - inputs.begin());
    const Shape& model = inputs[i].shape;
    if (!model.unknown_rank() && model.rank() != opt.shape.rank()) {
      return InvalidArgument("--input_shape (ge.inputShape) gives input '", opt.name, "' the shape ",
                             opt.shape.ToString(), " of rank ", opt.shape.rank(), ", but the model's input has rank ",
                             model.rank(), " (", model.ToString(), ")");
    }
    for (size_t d = 0; !model.unknown_rank() && d < model.dims().size(); ++d) {
      if (model.dim(d) >= 0 && opt.shape.dim(d) >= 0 && model.dim(d) != opt.shape.dim(d)) {
        return InvalidArgument("--input_shape (ge.inputShape) sets dim ", d, " of input '", opt.name, "' to ",
                               opt.shape.dim(d), ", but the model fixes it at ", model.dim(d));
      }
    }
    r.user[i] = opt.shape;
    r.from_option[i] = true;
    r.order.push_back(i);
    ordered.insert(i);
  }
  for (size_t i = 0; i < inputs.size(); ++i) {
    if (!ordered.contains(i)) r.order.push_back(i);
  }
  ResolvedGears out;
  out.user_shapes = r.user;
  if (!options.enabled()) return out;
  for (size_t g = 0; g < options.gears.size(); ++g) {
    absl::StatusOr<std::vector<Shape>> shapes = options.mode == GearMode::kBatch       ? r.Batch(g)
                                                : options.mode == GearMode::kImageSize ? r.ImageSize(g)
                                                                                       : r.Dims(g);
    if (!shapes.ok()) return shapes.status();
    out.shapes.push_back(*std::move(shapes));
    out.labels.push_back(Join(options.gears[g]));
  }
  for (size_t g = 0; g < out.shapes.size(); ++g) {
    for (size_t h = 0; h < g; ++h) {
      if (out.shapes[g] == out.shapes[h]) {
        return InvalidArgument("gears ", h, " (", out.labels[h], ") and ", g, " (", out.labels[g], ") of ",
                               options.OptionName(), " give the inputs the same shapes");
      }
    }
  }
  out.max_shapes = out.shapes.front();
  for (const auto& gear : out.shapes) {
    for (size_t i = 0; i < gear.size(); ++i) {
      for (size_t d = 0; d < gear[i].dims().size(); ++d) {
        out.max_shapes[i].set_dim(d, std::max(out.max_shapes[i].dim(d), gear[i].dim(d)));
      }
    }
  }
  return out;
}

}  // namespace ge::compiler
