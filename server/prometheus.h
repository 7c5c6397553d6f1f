// A small Prometheus metrics registry: counters, gauges and histograms with
// labels, rendered in the text exposition format (version 0.0.4).
//
// Families are declared once, in the order they are rendered, with their
// label names; a child per label-value tuple is created on first use and
// rendered in sorted order, so the output is deterministic. Children are
// never removed (label values must come from small sets: rpc names, codes,
// tenants, devices). Updating a child is lock-free for counters and gauges
// and takes a per-child lock for histograms; looking one up takes the
// family's lock, so hot paths keep the reference. Collectors run before each
// render to refresh gauges whose truth lives elsewhere (queue lengths,
// device memory). No singleton: the registry is passed to whoever needs it.
#pragma once

#include <atomic>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

namespace ge::server::prometheus {

using Labels = std::vector<std::string>;  // values, in the family's label order

class Counter {
 public:
  void Increment(double by = 1);
  double value() const { return value_.load(); }

 private:
  std::atomic<double> value_{0};
};

class Gauge {
 public:
  void Set(double v) { value_.store(v); }
  void Add(double by);
  double value() const { return value_.load(); }

 private:
  std::atomic<double> value_{0};
};

class Histogram {
 public:
  explicit Histogram(const std::vector<double>* bounds);
  void Observe(double v);
  struct Snapshot {
    std::vector<uint64_t> cumulative;  // per bound, then +Inf
    double sum = 0;
    uint64_t count = 0;
  };
  Snapshot Read() const;

 private:
  const std::vector<double>* bounds_;
  mutable std::mutex mu_;
  std::vector<uint64_t> counts_;  // per bucket (not cumulative), +Inf last
  double sum_ = 0;
  uint64_t count_ = 0;
};

class FamilyBase {
 public:
  FamilyBase(std::string name, std::string help, std::string type, std::vector<std::string> label_names);
  virtual ~FamilyBase() = default;
  void Render(std::string& out) const;
  size_t label_count() const { return label_names_.size(); }

 protected:
  virtual void RenderChildren(std::string& out) const = 0;
  // name{label="value",...extra} for a child.
  std::string Series(const std::string& suffix, const Labels& values, const std::string& extra = "") const;
  const std::string name_;
  const std::string help_;
  const std::string type_;
  const std::vector<std::string> label_names_;
  mutable std::mutex mu_;
};

template <typename M>
class Family : public FamilyBase {
 public:
  using FamilyBase::FamilyBase;
  // The child for `values` (one per label name; checked: a programmer error).
  M& WithLabels(const Labels& values);
  M& Get() { return WithLabels({}); }

 protected:
  std::map<Labels, std::unique_ptr<M>> children_;  // guarded by mu_
};

class CounterFamily : public Family<Counter> {
 public:
  using Family::Family;
  void RenderChildren(std::string& out) const override;
};
class GaugeFamily : public Family<Gauge> {
 public:
  using Family::Family;
  void RenderChildren(std::string& out) const override;
};
class HistogramFamily : public FamilyBase {
 public:
  HistogramFamily(std::string name, std::string help, std::vector<std::string> label_names,
                  std::vector<double> bounds);
  Histogram& WithLabels(const Labels& values);
  Histogram& Get() { return WithLabels({}); }
  void RenderChildren(std::string& out) const override;

 private:
  const std::vector<double> bounds_;
  std::map<Labels, std::unique_ptr<Histogram>> children_;  // guarded by mu_
};

class Registry {
 public:
  // Families without labels get their one child at once, so they render 0
  // before the first update.
  CounterFamily& AddCounter(const std::string& name, const std::string& help, std::vector<std::string> labels = {});
  GaugeFamily& AddGauge(const std::string& name, const std::string& help, std::vector<std::string> labels = {});
  HistogramFamily& AddHistogram(const std::string& name, const std::string& help, std::vector<std::string> labels,
                                std::vector<double> bounds);
  void AddCollector(std::function<void()> collector);
  // Runs the collectors, then renders every family in declaration order.
  std::string Render() const;

 private:
  std::vector<std::unique_ptr<FamilyBase>> families_;
  std::vector<std::function<void()>> collectors_;
};

// Shortest round-trip decimal; +Inf, -Inf, NaN as Prometheus spells them.
std::string FormatValue(double v);
// Escapes a label value (\\, \", \n).
std::string EscapeLabelValue(const std::string& v);

}  // namespace ge::server::prometheus
