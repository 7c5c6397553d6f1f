// Every metric the daemon exports, declared in one place (docs/metrics.md
// documents the same list). Names follow Prometheus conventions: base units
// (seconds, bytes), _total for counters. The cache metrics follow the
// daemon's compiled-model cache (runtime/cache): 0 when it runs without one.
#pragma once

#include "server/prometheus.h"

namespace ge::server {

struct ServerMetrics {
  explicit ServerMetrics(prometheus::Registry& registry);

  prometheus::CounterFamily& requests_total;            // {rpc, code}
  prometheus::HistogramFamily& request_duration;        // {rpc}
  prometheus::HistogramFamily& queue_duration;          // {device}
  prometheus::HistogramFamily& compile_duration;
  prometheus::HistogramFamily& run_duration;  // {tenant}: never a client's graph name
  prometheus::GaugeFamily& pending_requests;
  prometheus::GaugeFamily& sessions;                    // {tenant}
  prometheus::GaugeFamily& graphs;                      // {tenant}
  prometheus::GaugeFamily& device_memory_used_bytes;    // {device}
  prometheus::GaugeFamily& device_memory_total_bytes;   // {device}
  prometheus::GaugeFamily& tenant_device_memory_used_bytes;  // {tenant}
  prometheus::GaugeFamily& tenant_memory_used_bytes;         // {tenant}: against max_memory_bytes
  prometheus::GaugeFamily& memory_budget_used_bytes;         // all tenants, against memory_budget_bytes
  prometheus::GaugeFamily& memory_budget_bytes;
  prometheus::CounterFamily& cache_hits_total;
  prometheus::CounterFamily& cache_misses_total;
  prometheus::CounterFamily& cache_evictions_total;
  prometheus::GaugeFamily& cache_bytes;
  prometheus::CounterFamily& cache_direct_hits_total;
  prometheus::CounterFamily& cache_direct_misses_total;
  prometheus::CounterFamily& model_imports_total;
  prometheus::HistogramFamily& model_load_duration;
  prometheus::CounterFamily& op_cache_lookups_total;     // {result}: hit, miss
  prometheus::CounterFamily& gear_runs_total;            // {path}: gear, dynamic
  // Model repositories (docs/serving.md): labelled by repository model
  // names, which the operator controls (never by a name a client sent).
  prometheus::CounterFamily& inference_requests_total;    // {model, version, code}
  prometheus::HistogramFamily& inference_batch_size;      // {model}: rows per run
  prometheus::HistogramFamily& inference_queue_duration;  // {model}
  prometheus::GaugeFamily& build_info;                  // {version}, always 1
};

}  // namespace ge::server
