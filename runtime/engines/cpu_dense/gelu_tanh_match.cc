// GELU-tanh matching by evaluation (gelu_tanh_match.h): grow the region of
// element-wise nodes off x, pick a closed sub-region, evaluate it in double.
#include "runtime/engines/cpu_dense/gelu_tanh_match.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <string>

namespace ge::engine::cpu_dense {
namespace {

constexpr double kSamples[] = {-8.0, -5.0, -3.5, -2.5, -1.75, -1.0, -0.6, -0.3, -0.1, 0.0,
                               0.05, 0.2,  0.45, 0.8,  1.2,   1.6,  2.2,  3.0,  4.5,  8.0};
constexpr int kNumSamples = sizeof(kSamples) / sizeof(kSamples[0]);

double GeluTanh(double x) {
  const double c = std::sqrt(2.0 / 3.14159265358979323846);
  return 0.5 * x * (1.0 + std::tanh(c * (x + 0.044715 * x * x * x)));
}

bool IsBinary(const std::string& t) { return t == "Add" || t == "Sub" || t == "Mul" || t == "Div" || t == "Pow"; }

// Whether `n` may join a region that holds `x` and `taken`: its operands are
// x, taken nodes or constant scalars, at least one of them not a constant.
bool Joins(const ir::Node& n, const ir::OutPort& x, const std::vector<ir::Node*>& taken,
           const NodeFilter& can_rewrite) {
  const std::string& t = n.type();
  const int arity = t == "Tanh" ? 1 : IsBinary(t) ? 2 : 0;
  if (arity == 0 || n.num_inputs() != arity || n.num_outputs() != 1) return false;
  if (!can_rewrite(n) || !n.control_inputs().empty() || !n.control_outputs().empty()) return false;
  const ir::ValueType& xt = x.node->op_desc().output(x.index).type;
  const ir::ValueType& nt = n.op_desc().output(0).type;
  if (nt.dtype() != xt.dtype() || nt.shape() != xt.shape()) return false;
  bool reads_region = false;
  for (int i = 0; i < arity; ++i) {
    const ir::OutPort p = n.input(i);
    if (!p) return false;
    if (p == x || std::find(taken.begin(), taken.end(), p.node) != taken.end()) {
      reads_region = true;
    } else if (!ConstScalar(n, i).has_value()) {
      return false;
    }
  }
  return reads_region;
}

double Apply(const std::string& t, double a, double b) {
  if (t == "Add") return a + b;
  if (t == "Sub") return a - b;
  if (t == "Mul") return a * b;
  if (t == "Div") return a / b;
  if (t == "Pow") return std::pow(a, b);
  return std::tanh(a);
}

// `region` (closed, `sink` last to be computed) evaluated on the samples
// against GELU-tanh; `region` comes back in topological order.
bool ComputesGeluTanh(const ir::OutPort& x, std::vector<ir::Node*>& region) {
  std::vector<ir::Node*> order;
  std::map<const ir::Node*, std::vector<double>> values;
  auto operand = [&](const ir::Node& n, int i, int s) -> std::optional<double> {
    const ir::OutPort p = n.input(i);
    if (p == x) return kSamples[s];
    auto it = values.find(p.node);
    if (it != values.end()) return it->second[s];
    if (std::find(region.begin(), region.end(), p.node) != region.end()) return std::nullopt;  // not yet computed
    return static_cast<double>(*ConstScalar(n, i));
  };
  while (order.size() < region.size()) {
    bool progress = false;
    for (ir::Node* n : region) {
      if (values.count(n)) continue;
      std::vector<double> v(kNumSamples);
      bool ready = true;
      for (int s = 0; s < kNumSamples && ready; ++s) {
        const std::optional<double> a = operand(*n, 0, s);
        const std::optional<double> b = n->num_inputs() > 1 ? operand(*n, 1, s) : std::optional<double>(0.0);
        ready = a.has_value() && b.has_value();
        if (ready) v[s] = Apply(n->type(), *a, *b);
      }
      if (!ready) continue;
      values.emplace(n, std::move(v));
      order.push_back(n);
      progress = true;
    }
    if (!progress) return false;
  }
  const std::vector<double>& y = values.at(order.back());
  for (int s = 0; s < kNumSamples; ++s) {
    const double want = GeluTanh(kSamples[s]);
    if (!(std::fabs(y[s] - want) <= 1e-5 * std::max(1.0, std::fabs(want)))) return false;
  }
  region = std::move(order);
  return true;
}

}  // namespace

std::optional<std::vector<ir::Node*>> MatchGeluTanh(const ir::OutPort& x, const NodeFilter& can_rewrite) {
  // Grow: every node that joins, until none does or the cap is passed.
  std::vector<ir::Node*> taken;
  for (bool grew = true; grew;) {
    grew = false;
    std::vector<ir::OutPort> sources = {x};
    for (ir::Node* n : taken) sources.push_back({n, 0});
    for (const ir::OutPort& src : sources) {
      for (const ir::InPort& use : src.node->consumers(src.index)) {
        ir::Node* n = use.node;
        if (std::find(taken.begin(), taken.end(), n) != taken.end() || !Joins(*n, x, taken, can_rewrite)) continue;
        taken.push_back(n);
        grew = true;
        if (static_cast<int>(taken.size()) > kMaxGeluNodes) return std::nullopt;
      }
    }
  }
  const bool has_tanh = std::any_of(taken.begin(), taken.end(), [](ir::Node* n) { return n->type() == "Tanh"; });
  if (!has_tanh) return std::nullopt;
  // Each Tanh's descendants are sink candidates; a closed region is a sink's
  // ancestors inside `taken` that hold every use of x and of themselves.
  for (ir::Node* sink : taken) {
    std::vector<ir::Node*> region = {sink};
    for (size_t i = 0; i < region.size(); ++i) {
      for (const ir::OutPort& p : region[i]->inputs()) {
        if (p && std::find(taken.begin(), taken.end(), p.node) != taken.end() &&
            std::find(region.begin(), region.end(), p.node) == region.end()) {
          region.push_back(p.node);
        }
      }
    }
    auto inside = [&](const ir::InPort& u) { return std::find(region.begin(), region.end(), u.node) != region.end(); };
    const auto& x_uses = x.node->consumers(x.index);
    bool closed = std::all_of(x_uses.begin(), x_uses.end(), inside);
    for (ir::Node* n : region) {
      if (n == sink) continue;
      const auto& uses = n->consumers(0);
      closed = closed && std::all_of(uses.begin(), uses.end(), inside);
    }
    const bool tanh = std::any_of(region.begin(), region.end(), [](ir::Node* n) { return n->type() == "Tanh"; });
    if (closed && tanh && ComputesGeluTanh(x, region)) return region;
  }
  return std::nullopt;
}

}  // namespace ge::engine::cpu_dense
