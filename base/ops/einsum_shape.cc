// Einsum equations: parsing into label lists and the size of every label
// (declared in shape_utils.h; shared by Einsum's shape inference and the
// host_cpu kernel).
#include <algorithm>
#include <cctype>
#include <map>
#include <string>
#include <vector>

#include "absl/strings/str_split.h"
#include "base/ops/shape_utils.h"
#include "base/status.h"

namespace ge::ops {

namespace {

// The labels of one term ("ab...c") for an input of `rank` dims (-1: no
// rank, the term must then have no ellipsis).
absl::StatusOr<std::vector<int>> ParseEinsumTerm(std::string_view term, int64_t rank, bool* has_ellipsis) {
  std::vector<int> labels;
  int64_t letters = 0;
  *has_ellipsis = false;
  for (size_t i = 0; i < term.size(); ++i) {
    if (term[i] == '.') {
      if (*has_ellipsis || term.substr(i, 3) != "...") return InvalidArgument("malformed ellipsis in '", term, "'");
      *has_ellipsis = true;
      i += 2;
    } else if (std::isalpha(static_cast<unsigned char>(term[i]))) {
      ++letters;
    } else {
      return InvalidArgument("unexpected character '", std::string(1, term[i]), "' in '", term, "'");
    }
  }
  const int64_t ellipsis = rank - letters;
  if (rank >= 0 && (ellipsis < 0 || (!*has_ellipsis && ellipsis != 0))) {
    return InvalidArgument("term '", term, "' does not match an input of rank ", rank);
  }
  for (size_t i = 0; i < term.size(); ++i) {
    if (term[i] == '.') {
      for (int64_t e = ellipsis; e >= 1; --e) labels.push_back(static_cast<int>(-e));
      i += 2;
    } else {
      labels.push_back(term[i]);
    }
  }
  return labels;
}

}  // namespace

absl::StatusOr<EinsumSpec> ParseEinsum(std::string_view equation, absl::Span<const int64_t> ranks) {
  std::string eq;
  for (char ch : equation) {
    if (!std::isspace(static_cast<unsigned char>(ch))) eq += ch;
  }
  const size_t arrow = eq.find("->");
  const std::string lhs = eq.substr(0, arrow);
  std::vector<std::string> terms = absl::StrSplit(lhs, ',');
  if (terms.size() != ranks.size()) {
    return InvalidArgument("equation '", equation, "' has ", terms.size(), " inputs, the node ", ranks.size());
  }
  EinsumSpec spec;
  int64_t max_ellipsis = 0;
  std::map<int, int> uses;
  for (size_t i = 0; i < terms.size(); ++i) {
    bool ellipsis = false;
    GE_ASSIGN_OR_RETURN(std::vector<int> labels, ParseEinsumTerm(terms[i], ranks[i], &ellipsis));
    for (int l : labels) {
      if (l < 0) {
        max_ellipsis = std::max<int64_t>(max_ellipsis, -l);
      } else {
        ++uses[l];
      }
    }
    spec.inputs.push_back(std::move(labels));
  }
  if (arrow == std::string::npos) {
    for (int64_t e = max_ellipsis; e >= 1; --e) spec.output.push_back(static_cast<int>(-e));
    for (const auto& [label, count] : uses) {
      if (count == 1) spec.output.push_back(label);
    }
    return spec;
  }
  const std::string rhs = eq.substr(arrow + 2);
  bool ellipsis = false;
  GE_ASSIGN_OR_RETURN(std::vector<int> out, ParseEinsumTerm(rhs, -1, &ellipsis));
  for (int l : out) {
    if (!uses.contains(l)) {
      return InvalidArgument("output label '", std::string(1, static_cast<char>(l)), "' is in no input");
    }
    if (std::count(out.begin(), out.end(), l) > 1) {
      return InvalidArgument("output label '", std::string(1, static_cast<char>(l)), "' repeats");
    }
  }
  // The output term's ellipsis stands for every broadcast ellipsis dim.
  for (size_t i = 0; i < rhs.size(); ++i) {
    if (rhs[i] == '.') {
      for (int64_t e = max_ellipsis; e >= 1; --e) spec.output.push_back(static_cast<int>(-e));
      i += 2;
    } else {
      spec.output.push_back(rhs[i]);
    }
  }
  return spec;
}

absl::StatusOr<std::map<int, int64_t>> EinsumLabelSizes(const EinsumSpec& spec, absl::Span<const Shape> inputs) {
  std::map<int, int64_t> sizes;
  for (size_t i = 0; i < inputs.size(); ++i) {
    for (size_t d = 0; d < spec.inputs[i].size(); ++d) {
      const int label = spec.inputs[i][d];
      const int64_t dim = inputs[i].dim(d);
      auto [it, inserted] = sizes.emplace(label, dim);
      if (inserted || dim == it->second) continue;
      if (label < 0) {  // ellipsis dims broadcast
        auto b = BroadcastDim(it->second, dim);
        if (!b.ok()) return InvalidArgument("ellipsis dims of the inputs do not broadcast: ", b.status().message());
        it->second = *b;
      } else if (it->second < 0) {
        it->second = dim;
      } else if (dim >= 0) {
        return InvalidArgument("label '", std::string(1, static_cast<char>(label)), "' has sizes ", it->second,
                               " and ", dim);
      }
    }
  }
  for (int label : spec.output) sizes.emplace(label, 1);  // an ellipsis no input has
  return sizes;
}

}  // namespace ge::ops
