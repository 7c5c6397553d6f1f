// ONNX's text ops: StringNormalizer and TfIdfVectorizer.
//
// StringNormalizer takes strings of shape [C] or [1, C], drops the
// stopwords and changes case; how many remain is known only at run time
// (none left gives one empty string). TfIdfVectorizer counts the n-grams
// of a pool in each row of [C] or [N, C] integers or strings and writes
// one float per pooled n-gram index.
#include "base/ops/op_families.h"

#include <algorithm>

#include "base/ops/infer_util.h"
#include "base/status.h"

namespace ge::ops {
namespace {

using Kind = ir::AttrValue::Kind;

absl::Status CheckRowsInput(const InferenceContext& ctx) {
  const Shape& shape = ctx.input_tensor(0).shape;
  if (!shape.unknown_rank() && shape.rank() != 1 && shape.rank() != 2) {
    return ctx.Error("expects shape [C] or [N, C], got ", ctx.input_type(0).ToString());
  }
  return absl::OkStatus();
}

absl::Status InferStringNormalizer(InferenceContext& ctx) {
  GE_RETURN_IF_ERROR(CheckRowsInput(ctx));
  const std::string action = ctx.AttrOr<std::string>("case_change_action", "NONE");
  if (action != "NONE" && action != "LOWER" && action != "UPPER") {
    return ctx.Error("case_change_action is '", action, "'; expected NONE, LOWER or UPPER");
  }
  const Shape& shape = ctx.input_tensor(0).shape;
  if (!shape.unknown_rank() && shape.rank() == 2 && shape.dim(0) != 1 && shape.dim(0) != -1) {
    return ctx.Error("a 2-D input must have shape [1, C], got ", ctx.input_type(0).ToString());
  }
  if (shape.unknown_rank()) {
    ctx.set_output(0, DataType::kString, Shape::UnknownRank());
  } else {
    ctx.set_output(0, DataType::kString, shape.rank() == 1 ? Shape{-1} : Shape{1, -1});
  }
  return absl::OkStatus();
}

absl::Status InferTfIdfVectorizer(InferenceContext& ctx) {
  GE_RETURN_IF_ERROR(CheckRowsInput(ctx));
  const std::string mode = ctx.AttrOr<std::string>("mode", "");
  if (mode != "TF" && mode != "IDF" && mode != "TFIDF") {
    return ctx.Error("mode is '", mode, "'; expected TF, IDF or TFIDF");
  }
  const auto indexes = ctx.AttrOr<std::vector<int64_t>>("ngram_indexes", {});
  if (indexes.empty()) return ctx.Error("ngram_indexes is empty");
  const int64_t width = *std::max_element(indexes.begin(), indexes.end()) + 1;
  const Shape& shape = ctx.input_tensor(0).shape;
  if (shape.unknown_rank()) {
    ctx.set_output(0, DataType::kFloat, Shape::UnknownRank());
  } else {
    ctx.set_output(0, DataType::kFloat, shape.rank() == 1 ? Shape{width} : Shape{shape.dim(0), width});
  }
  return absl::OkStatus();
}

}  // namespace

void RegisterTextOps(OpRegistry& r) {
  MustRegister(r, OpSchemaBuilder("StringNormalizer", 10)
                      .Doc("Drops `stopwords` (compared case-insensitively unless is_case_sensitive) "
                           "from strings of shape [C] or [1, C], then applies case_change_action "
                           "(NONE, LOWER, UPPER). Nothing left gives one empty string.")
                      .Input("X", "string")
                      .Output("Y", "string")
                      .Attr("case_change_action", Kind::kString, std::string("NONE"))
                      .Attr("is_case_sensitive", Kind::kInt, int64_t{0})
                      .OptionalAttr("locale", Kind::kString)
                      .OptionalAttr("stopwords", Kind::kStrings)
                      .ValueDependentOutputShape()  // how many strings remain
                      .Infer(InferStringNormalizer));
  MustRegister(r, OpSchemaBuilder("TfIdfVectorizer", 9)
                      .Doc("Counts, in each row, the n-grams (min_gram_length..max_gram_length items, "
                           "up to max_skip_count items skipped between them) of the pool "
                           "(pool_int64s or pool_strings, grouped by length at ngram_counts) and "
                           "writes them at ngram_indexes: counts (TF), weights where present (IDF) "
                           "or counts times weights (TFIDF).")
                      .Input("X", "T")
                      .Output("Y", "f32")
                      .TypeConstraint("T", Types({DataType::kString, DataType::kInt32, DataType::kInt64}))
                      .RequiredAttr("max_gram_length", Kind::kInt)
                      .RequiredAttr("min_gram_length", Kind::kInt)
                      .RequiredAttr("max_skip_count", Kind::kInt)
                      .RequiredAttr("mode", Kind::kString)
                      .RequiredAttr("ngram_counts", Kind::kInts)
                      .RequiredAttr("ngram_indexes", Kind::kInts)
                      .OptionalAttr("pool_int64s", Kind::kInts)
                      .OptionalAttr("pool_strings", Kind::kStrings)
                      .OptionalAttr("weights", Kind::kFloats)
                      .Infer(InferTfIdfVectorizer));
}

}  // namespace ge::ops
