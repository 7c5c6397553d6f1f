// The Prometheus registry and its text exposition format.
#include "server/prometheus.h"

#include <charconv>
#include <cmath>

#include "base/status.h"

namespace ge::server::prometheus {
namespace {

void AtomicAdd(std::atomic<double>& target, double by) {
  double old = target.load();
  while (!target.compare_exchange_weak(old, old + by)) {
  }
}

std::string EscapeHelp(const std::string& v) {
  std::string out;
  for (char c : v) {
    if (c == '\\') out += "\\\\";
    else if (c == '\n') out += "\\n";
    else out += c;
  }
  return out;
}

}  // namespace

std::string FormatValue(double v) {
  if (std::isnan(v)) return "NaN";
  if (std::isinf(v)) return v > 0 ? "+Inf" : "-Inf";
  char buffer[64];
  auto result = std::to_chars(buffer, buffer + sizeof(buffer), v);
  return std::string(buffer, result.ptr);
}

std::string EscapeLabelValue(const std::string& v) {
  std::string out;
  for (char c : v) {
    if (c == '\\') out += "\\\\";
    else if (c == '"') out += "\\\"";
    else if (c == '\n') out += "\\n";
    else out += c;
  }
  return out;
}

void Counter::Increment(double by) { AtomicAdd(value_, by); }
void Gauge::Add(double by) { AtomicAdd(value_, by); }

Histogram::Histogram(const std::vector<double>* bounds) : bounds_(bounds), counts_(bounds->size() + 1, 0) {}

void Histogram::Observe(double v) {
  size_t i = 0;
  while (i < bounds_->size() && v > (*bounds_)[i]) ++i;
  std::lock_guard<std::mutex> lock(mu_);
  ++counts_[i];
  sum_ += v;
  ++count_;
}

Histogram::Snapshot Histogram::Read() const {
  std::lock_guard<std::mutex> lock(mu_);
  Snapshot s;
  uint64_t running = 0;
  for (uint64_t c : counts_) {
    running += c;
    s.cumulative.push_back(running);
  }
  s.sum = sum_;
  s.count = count_;
  return s;
}

FamilyBase::FamilyBase(std::string name, std::string help, std::string type, std::vector<std::string> label_names)
    : name_(std::move(name)), help_(std::move(help)), type_(std::move(type)), label_names_(std::move(label_names)) {}

void FamilyBase::Render(std::string& out) const {
  out += "# HELP " + name_ + " " + EscapeHelp(help_) + "\n";
  out += "# TYPE " + name_ + " " + type_ + "\n";
  std::lock_guard<std::mutex> lock(mu_);
  RenderChildren(out);
}

std::string FamilyBase::Series(const std::string& suffix, const Labels& values, const std::string& extra) const {
  std::string s = name_ + suffix;
  if (label_names_.empty() && extra.empty()) return s;
  s += "{";
  for (size_t i = 0; i < label_names_.size(); ++i) {
    if (i > 0) s += ",";
    s += label_names_[i] + "=\"" + EscapeLabelValue(values[i]) + "\"";
  }
  if (!extra.empty()) s += (label_names_.empty() ? "" : ",") + extra;
  return s + "}";
}

template <typename M>
M& Family<M>::WithLabels(const Labels& values) {
  GE_CHECK(values.size() == label_names_.size());
  std::lock_guard<std::mutex> lock(mu_);
  auto it = children_.find(values);
  if (it != children_.end()) return *it->second;
  return *children_.emplace(values, std::make_unique<M>()).first->second;
}

template class Family<Counter>;
template class Family<Gauge>;

void CounterFamily::RenderChildren(std::string& out) const {
  for (const auto& [labels, child] : children_) out += Series("", labels) + " " + FormatValue(child->value()) + "\n";
}

void GaugeFamily::RenderChildren(std::string& out) const {
  for (const auto& [labels, child] : children_) out += Series("", labels) + " " + FormatValue(child->value()) + "\n";
}

HistogramFamily::HistogramFamily(std::string name, std::string help, std::vector<std::string> label_names,
                                 std::vector<double> bounds)
    : FamilyBase(std::move(name), std::move(help), "histogram", std::move(label_names)), bounds_(std::move(bounds)) {}

Histogram& HistogramFamily::WithLabels(const Labels& values) {
  GE_CHECK(values.size() == label_names_.size());
  std::lock_guard<std::mutex> lock(mu_);
  auto it = children_.find(values);
  if (it != children_.end()) return *it->second;
  return *children_.emplace(values, std::make_unique<Histogram>(&bounds_)).first->second;
}

void HistogramFamily::RenderChildren(std::string& out) const {
  for (const auto& [labels, child] : children_) {
    const Histogram::Snapshot s = child->Read();
    for (size_t i = 0; i <= bounds_.size(); ++i) {
      const std::string le = i < bounds_.size() ? FormatValue(bounds_[i]) : "+Inf";
      out += Series("_bucket", labels, "le=\"" + le + "\"") + " " + std::to_string(s.cumulative[i]) + "\n";
    }
    out += Series("_sum", labels) + " " + FormatValue(s.sum) + "\n";
    out += Series("_count", labels) + " " + std::to_string(s.count) + "\n";
  }
}

CounterFamily& Registry::AddCounter(const std::string& name, const std::string& help,
                                    std::vector<std::string> labels) {
  auto family = std::make_unique<CounterFamily>(name, help, "counter", std::move(labels));
  CounterFamily& ref = *family;
  if (ref.label_count() == 0) ref.Get();
  families_.push_back(std::move(family));
  return ref;
}

GaugeFamily& Registry::AddGauge(const std::string& name, const std::string& help, std::vector<std::string> labels) {
  auto family = std::make_unique<GaugeFamily>(name, help, "gauge", std::move(labels));
  GaugeFamily& ref = *family;
  if (ref.label_count() == 0) ref.Get();
  families_.push_back(std::move(family));
  return ref;
}

HistogramFamily& Registry::AddHistogram(const std::string& name, const std::string& help,
                                        std::vector<std::string> labels, std::vector<double> bounds) {
  auto family = std::make_unique<HistogramFamily>(name, help, std::move(labels), std::move(bounds));
  HistogramFamily& ref = *family;
  if (ref.label_count() == 0) ref.Get();
  families_.push_back(std::move(family));
  return ref;
}

void Registry::AddCollector(std::function<void()> collector) { collectors_.push_back(std::move(collector)); }

std::string Registry::Render() const {
  for (const auto& c : collectors_) c();
  std::string out;
  for (const auto& f : families_) f->Render(out);
  return out;
}

}  // namespace ge::server::prometheus
