// The daemon's metric families, in rendering order.
#include "server/metrics.h"

#include "base/version.h"

namespace ge::server {
namespace {

// Latency buckets from 50 us (a tiny graph's round trip) to 2 minutes.
std::vector<double> LatencyBuckets() {
  return {0.00005, 0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05,
          0.1,     0.25,   0.5,     1,      2.5,   5,      10,    30,   60,    120};
}

}  // namespace

ServerMetrics::ServerMetrics(prometheus::Registry& r)
    : requests_total(
          r.AddCounter("ged_requests_total", "RPCs finished, by method and gRPC status code", {"rpc", "code"})),
      request_duration(r.AddHistogram("ged_request_duration_seconds", "Time from an RPC's arrival to its reply",
                                      {"rpc"}, LatencyBuckets())),
      queue_duration(r.AddHistogram("ged_queue_duration_seconds", "Time a run waited in its device's run queue",
                                    {"device"}, LatencyBuckets())),
      compile_duration(
          r.AddHistogram("ged_compile_duration_seconds", "Time to compile one graph", {}, LatencyBuckets())),
      run_duration(r.AddHistogram("ged_run_duration_seconds", "Time to execute one run, by tenant", {"tenant"},
                                  LatencyBuckets())),
      pending_requests(r.AddGauge("ged_pending_requests", "RPCs accepted and not yet answered")),
      sessions(r.AddGauge("ged_sessions", "Live sessions, by tenant", {"tenant"})),
      graphs(r.AddGauge("ged_graphs", "Graphs added to live sessions, by tenant", {"tenant"})),
      device_memory_used_bytes(r.AddGauge("ged_device_memory_used_bytes",
                                          "Device memory held by sessions (static arenas, variables)", {"device"})),
      device_memory_total_bytes(r.AddGauge("ged_device_memory_total_bytes", "Device memory capacity", {"device"})),
      tenant_device_memory_used_bytes(r.AddGauge("ged_tenant_device_memory_used_bytes",
                                                 "Device memory held by a tenant's sessions, against its quota",
                                                 {"tenant"})),
      tenant_memory_used_bytes(r.AddGauge("ged_tenant_memory_used_bytes",
                                          "Memory held by a tenant's calls (device and host), against max_memory_bytes",
                                          {"tenant"})),
      memory_budget_used_bytes(r.AddGauge("ged_memory_budget_used_bytes",
                                          "Memory held by every tenant together, against memory_budget_bytes")),
      memory_budget_bytes(r.AddGauge("ged_memory_budget_bytes", "The daemon's memory budget (memory_budget_bytes)")),
      cache_hits_total(r.AddCounter("ged_cache_hits_total", "Compiled-model cache hits")),
      cache_misses_total(r.AddCounter("ged_cache_misses_total", "Compiled-model cache misses")),
      cache_evictions_total(r.AddCounter("ged_cache_evictions_total", "Compiled models evicted from the cache")),
      cache_bytes(r.AddGauge("ged_cache_bytes", "Bytes held by the compiled-model cache")),
      cache_direct_hits_total(r.AddCounter("ged_cache_direct_hits_total",
                                           "Direct-mode cache lookups (by the model's bytes) that found an entry")),
      cache_direct_misses_total(
          r.AddCounter("ged_cache_direct_misses_total", "Direct-mode cache lookups that found none or a stale one")),
      model_imports_total(r.AddCounter("ged_model_imports_total", "Models imported (ONNX or GraphDef)")),
      model_load_duration(
          r.AddHistogram("ged_model_load_duration_seconds", "Time to load one compiled model", {}, LatencyBuckets())),
      op_cache_lookups_total(r.AddCounter(
          "ged_op_cache_lookups_total", "ExecuteOp lookups of compiled single ops, by result (hit, miss)", {"result"})),
      gear_runs_total(r.AddCounter("ged_gear_runs_total",
                                   "Runs of graphs compiled with gears, by path: a gear's static branch (gear) or "
                                   "the dynamic graph of hybrid mode (dynamic)",
                                   {"path"})),
      inference_requests_total(r.AddCounter("ged_inference_requests_total",
                                            "Inference requests of repository models, by model, version and code",
                                            {"model", "version", "code"})),
      inference_batch_size(r.AddHistogram("ged_inference_batch_size",
                                          "Rows of each run of a repository model (several requests when batched)",
                                          {"model"}, {1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024, 4096})),
      inference_queue_duration(r.AddHistogram("ged_inference_queue_duration_seconds",
                                              "Time a request waited in its model's batch queue", {"model"},
                                              LatencyBuckets())),
      build_info(r.AddGauge("ged_build_info", "Always 1; the version label names the build", {"version"})) {
  build_info.WithLabels({GED_VERSION_STRING}).Set(1);
}

}  // namespace ge::server
