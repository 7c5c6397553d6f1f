// Inference of the ops of base/ops/text_ops.cc: StringNormalizer and
// TfIdfVectorizer.
#include "gtest/gtest.h"
#include "tests/unit/base/ops/op_test_util.h"

namespace ge::ops::testing {
namespace {

void AddStringNormalizerCases(std::vector<InferCase>& t) {
  const ir::AttrMap lower = {{"case_change_action", std::string("LOWER")},
                             {"stopwords", std::vector<std::string>{"monday"}}};
  t.push_back({.op = "StringNormalizer", .inputs = {"string[4]"}, .attrs = lower, .outputs = {"string[-1]"}});
  t.push_back({.op = "StringNormalizer", .inputs = {"string[1,-1]"}, .outputs = {"string[1,-1]"}});
  t.push_back({.op = "StringNormalizer", .inputs = {"string[?]"}, .outputs = {"string[?]"}});
  t.push_back({.op = "StringNormalizer", .inputs = {"string[2,3]"}, .outputs = {""}, .error = "[1, C]"});
  t.push_back({.op = "StringNormalizer", .inputs = {"string[3]"},
               .attrs = {{"case_change_action", std::string("TITLE")}}, .outputs = {""}, .error = "TITLE"});
  t.push_back({.op = "StringNormalizer", .inputs = {"f32[3]"}, .outputs = {""}, .error = "f32"});
}

void AddTfIdfCases(std::vector<InferCase>& t) {
  const ir::AttrMap attrs = {{"max_gram_length", int64_t{2}},
                             {"min_gram_length", int64_t{1}},
                             {"max_skip_count", int64_t{0}},
                             {"mode", std::string("TF")},
                             {"ngram_counts", std::vector<int64_t>{0, 2}},
                             {"ngram_indexes", std::vector<int64_t>{0, 1, 2}},
                             {"pool_int64s", std::vector<int64_t>{2, 3, 5, 4}}};
  t.push_back({.op = "TfIdfVectorizer", .inputs = {"i32[12]"}, .attrs = attrs, .outputs = {"f32[3]"}});
  t.push_back({.op = "TfIdfVectorizer", .inputs = {"i64[2,6]"}, .attrs = attrs, .outputs = {"f32[2,3]"}});
  t.push_back({.op = "TfIdfVectorizer", .inputs = {"i64[-1,-1]"}, .attrs = attrs, .outputs = {"f32[-1,3]"}});
  t.push_back({.op = "TfIdfVectorizer", .inputs = {"i64[2,2,2]"}, .attrs = attrs, .outputs = {""},
               .error = "[N, C]"});
  ir::AttrMap bad_mode = attrs;
  bad_mode["mode"] = std::string("BM25");
  t.push_back({.op = "TfIdfVectorizer", .inputs = {"i64[6]"}, .attrs = bad_mode, .outputs = {""}, .error = "BM25"});
}

}  // namespace

const std::vector<InferCase>& TextOpCases() {
  static const auto* cases = [] {
    auto* t = new std::vector<InferCase>();
    AddStringNormalizerCases(*t);
    AddTfIdfCases(*t);
    return t;
  }();
  return *cases;
}

TEST(TextOpsTest, Inference) { RunCases(TextOpCases()); }

}  // namespace ge::ops::testing
