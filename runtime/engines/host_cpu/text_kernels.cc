// StringNormalizer and TfIdfVectorizer on host_cpu (semantics in
// base/ops/text_ops.cc). Case changes are ASCII-only (bytes of multi-byte
// UTF-8 characters pass through unchanged): ged has no locale tables.
#include <algorithm>
#include <cctype>
#include <map>
#include <set>
#include <string>
#include <type_traits>
#include <vector>

#include "base/status.h"
#include "runtime/engines/host_cpu/kernel_registry.h"
#include "runtime/engines/sdk/kernel_util.h"

namespace ge::engine::host_cpu {
namespace {

std::string Lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

std::string Upper(std::string s) {
  for (char& c : s) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return s;
}

class StringNormalizerKernel final : public Kernel {
 public:
  StringNormalizerKernel(const ir::OpDesc& op, std::string action, bool case_sensitive)
      : op_(op), action_(std::move(action)), case_sensitive_(case_sensitive) {
    for (const std::string& w : op.GetAttrOr<std::vector<std::string>>("stopwords", {})) {
      stopwords_.insert(case_sensitive_ ? w : Lower(w));
    }
  }

  absl::Status Compute(ExecuteContext& ctx) override {
    const Tensor& x = ctx.input(0);
    const int64_t rank = x.shape().rank();
    if ((rank != 1 && rank != 2) || (rank == 2 && x.shape().dim(0) != 1)) {
      return NodeError(op_, "expects shape [C] or [1, C], got ", x.shape().ToString());
    }
    std::vector<std::string> kept;
    const std::string* in = x.data<std::string>();
    for (int64_t i = 0; i < x.NumElements(); ++i) {
      if (stopwords_.contains(case_sensitive_ ? in[i] : Lower(in[i]))) continue;
      kept.push_back(action_ == "LOWER" ? Lower(in[i]) : action_ == "UPPER" ? Upper(in[i]) : in[i]);
    }
    if (kept.empty()) kept.emplace_back();  // ONNX: one empty string
    const int64_t n = static_cast<int64_t>(kept.size());
    GE_ASSIGN_OR_RETURN(Tensor out, ctx.Output(0, rank == 1 ? Shape{n} : Shape{1, n}));
    std::string* o = out.data<std::string>();
    for (int64_t i = 0; i < n; ++i) o[i] = std::move(kept[static_cast<size_t>(i)]);
    return absl::OkStatus();
  }

 private:
  ir::OpDesc op_;
  std::string action_;
  bool case_sensitive_;
  std::set<std::string> stopwords_;
};

absl::StatusOr<std::unique_ptr<Kernel>> CreateStringNormalizer(const ir::OpDesc& op) {
  std::string action = StringAttr(op, "case_change_action", "NONE");
  if (action != "NONE" && action != "LOWER" && action != "UPPER") {
    return NodeError(op, "case_change_action is '", action, "'; expected NONE, LOWER or UPPER");
  }
  return std::unique_ptr<Kernel>(
      new StringNormalizerKernel(op, std::move(action), IntAttr(op, "is_case_sensitive", 0) != 0));
}

enum class TfIdfMode { kTf, kIdf, kTfIdf };

// The pool as n-grams of one key type (int64 or string) mapped to their
// output columns.
template <typename Key>
using GramTable = std::map<std::vector<Key>, int64_t>;

struct TfIdfConfig {
  int64_t min_gram = 1, max_gram = 1, max_skip = 0, width = 0;
  TfIdfMode mode = TfIdfMode::kTf;
  std::vector<float> weights;  // by output column; empty: all 1
};

// Splits `pool` (n-grams of length 1, 2, ... starting at ngram_counts)
// into n-grams and assigns the k-th one to ngram_indexes[k].
template <typename Key>
absl::StatusOr<GramTable<Key>> BuildTable(const ir::OpDesc& op, const std::vector<Key>& pool,
                                          const std::vector<int64_t>& counts, const std::vector<int64_t>& indexes) {
  GramTable<Key> table;
  size_t k = 0;
  for (size_t level = 0; level < counts.size(); ++level) {
    const int64_t n = static_cast<int64_t>(level) + 1;
    const int64_t begin = counts[level];
    const int64_t end = level + 1 < counts.size() ? counts[level + 1] : static_cast<int64_t>(pool.size());
    if (begin < 0 || end < begin || end > static_cast<int64_t>(pool.size()) || (end - begin) % n != 0) {
      return NodeError(op, "ngram_counts ", begin, "..", end, " do not split the pool into ", n, "-grams");
    }
    for (int64_t at = begin; at < end; at += n, ++k) {
      if (k >= indexes.size()) return NodeError(op, "the pool has more n-grams than ngram_indexes");
      table[std::vector<Key>(pool.begin() + at, pool.begin() + at + n)] = indexes[k];
    }
  }
  if (k != indexes.size()) return NodeError(op, "ngram_indexes has ", indexes.size(), " entries, the pool ", k);
  return table;
}

template <typename Key>
class TfIdfKernel final : public Kernel {
 public:
  TfIdfKernel(const ir::OpDesc& op, TfIdfConfig config, GramTable<Key> table)
      : op_(op), config_(std::move(config)), table_(std::move(table)) {}

  absl::Status Compute(ExecuteContext& ctx) override {
    const Tensor& x = ctx.input(0);
    const int64_t rank = x.shape().rank();
    if (rank != 1 && rank != 2) return NodeError(op_, "expects shape [C] or [N, C], got ", x.shape().ToString());
    const int64_t rows = rank == 1 ? 1 : x.shape().dim(0);
    const int64_t cols = x.shape().dim(rank - 1);
    const Shape out_shape = rank == 1 ? Shape{config_.width} : Shape{rows, config_.width};
    GE_ASSIGN_OR_RETURN(Tensor out, ctx.Output(0, out_shape));
    float* y = out.data<float>();
    std::fill(y, y + out.NumElements(), 0.0f);
    const std::vector<Key> items = ReadKeys(x);
    std::vector<int64_t> counts(static_cast<size_t>(config_.width));
    for (int64_t r = 0; r < rows; ++r) {
      std::fill(counts.begin(), counts.end(), 0);
      CountRow(items.data() + r * cols, cols, counts);
      for (int64_t c = 0; c < config_.width; ++c) y[r * config_.width + c] = Score(c, counts[static_cast<size_t>(c)]);
    }
    return absl::OkStatus();
  }

 private:
  static std::vector<Key> ReadKeys(const Tensor& x) {
    if constexpr (std::is_same_v<Key, std::string>) {
      return std::vector<std::string>(x.data<std::string>(), x.data<std::string>() + x.NumElements());
    } else {
      return ReadInts(x);
    }
  }

  // Every n-gram starting at each position with each gap (skip + 1)
  // between its items; a unigram is the same for every gap, so it counts
  // once (gap 1).
  void CountRow(const Key* row, int64_t cols, std::vector<int64_t>& counts) const {
    std::vector<Key> gram;
    for (int64_t start = 0; start < cols; ++start) {
      for (int64_t gap = 1; gap <= config_.max_skip + 1; ++gap) {
        gram.clear();
        for (int64_t n = 1, at = start; n <= config_.max_gram && at < cols; ++n, at += gap) {
          gram.push_back(row[at]);
          if (n < config_.min_gram || (n == 1 && gap > 1)) continue;
          auto it = table_.find(gram);
          if (it != table_.end()) ++counts[static_cast<size_t>(it->second)];
        }
      }
    }
  }

  float Score(int64_t column, int64_t count) const {
    const float weight = config_.weights.empty() ? 1.0f : config_.weights[static_cast<size_t>(column)];
    switch (config_.mode) {
      case TfIdfMode::kTf:
        return static_cast<float>(count);
      case TfIdfMode::kIdf:
        return count > 0 ? weight : 0.0f;
      case TfIdfMode::kTfIdf:
        return static_cast<float>(count) * weight;
    }
    return 0.0f;
  }

  ir::OpDesc op_;
  TfIdfConfig config_;
  GramTable<Key> table_;
};

absl::StatusOr<TfIdfConfig> ReadTfIdfConfig(const ir::OpDesc& op, const std::vector<int64_t>& indexes) {
  TfIdfConfig config;
  config.min_gram = IntAttr(op, "min_gram_length", 1);
  config.max_gram = IntAttr(op, "max_gram_length", 1);
  config.max_skip = IntAttr(op, "max_skip_count", 0);
  if (config.min_gram < 1 || config.max_gram < config.min_gram || config.max_skip < 0) {
    return NodeError(op, "needs 1 <= min_gram_length <= max_gram_length and max_skip_count >= 0");
  }
  const std::string mode = StringAttr(op, "mode", "");
  if (mode == "TF") {
    config.mode = TfIdfMode::kTf;
  } else if (mode == "IDF") {
    config.mode = TfIdfMode::kIdf;
  } else if (mode == "TFIDF") {
    config.mode = TfIdfMode::kTfIdf;
  } else {
    return NodeError(op, "mode is '", mode, "'; expected TF, IDF or TFIDF");
  }
  if (indexes.empty()) return NodeError(op, "ngram_indexes is empty");
  for (int64_t i : indexes) {
    if (i < 0) return NodeError(op, "ngram_indexes has the negative index ", i);
  }
  config.width = *std::max_element(indexes.begin(), indexes.end()) + 1;
  const std::vector<float> weights = op.GetAttrOr<std::vector<float>>("weights", {});
  if (!weights.empty()) {
    if (weights.size() != indexes.size()) {
      return NodeError(op, "weights has ", weights.size(), " entries, ngram_indexes ", indexes.size());
    }
    config.weights.assign(static_cast<size_t>(config.width), 0.0f);
    for (size_t k = 0; k < indexes.size(); ++k) config.weights[static_cast<size_t>(indexes[k])] = weights[k];
  }
  return config;
}

absl::StatusOr<std::unique_ptr<Kernel>> CreateTfIdfVectorizer(const ir::OpDesc& op) {
  const std::vector<int64_t> counts = IntsAttr(op, "ngram_counts");
  const std::vector<int64_t> indexes = IntsAttr(op, "ngram_indexes");
  GE_ASSIGN_OR_RETURN(TfIdfConfig config, ReadTfIdfConfig(op, indexes));
  const DataType dtype = op.num_inputs() > 0 ? op.input(0).type.dtype() : DataType::kUndefined;
  const bool strings = dtype == DataType::kString || (dtype == DataType::kUndefined && op.HasAttr("pool_strings"));
  if (strings) {
    const auto pool = op.GetAttrOr<std::vector<std::string>>("pool_strings", {});
    GE_ASSIGN_OR_RETURN(GramTable<std::string> table, BuildTable(op, pool, counts, indexes));
    return std::unique_ptr<Kernel>(new TfIdfKernel<std::string>(op, std::move(config), std::move(table)));
  }
  const std::vector<int64_t> pool = IntsAttr(op, "pool_int64s");
  GE_ASSIGN_OR_RETURN(GramTable<int64_t> table, BuildTable(op, pool, counts, indexes));
  return std::unique_ptr<Kernel>(new TfIdfKernel<int64_t>(op, std::move(config), std::move(table)));
}

}  // namespace

void RegisterTextKernels(KernelTable& table) {
  const DataTypeSet strings{DataType::kString};
  table.Add({"StringNormalizer", CreateStringNormalizer, {strings}, {strings}});
  table.Add({"TfIdfVectorizer", CreateTfIdfVectorizer,
             {DataTypeSet{DataType::kString, DataType::kInt32, DataType::kInt64}},
             {DataTypeSet{DataType::kFloat}}});
}

}  // namespace ge::engine::host_cpu
