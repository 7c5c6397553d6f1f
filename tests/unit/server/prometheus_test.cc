// The Prometheus registry against exact exposition text.
#include "server/prometheus.h"

#include <cmath>

#include "gtest/gtest.h"

namespace ge::server::prometheus {
namespace {

TEST(PrometheusTest, CountersGaugesAndLabelsRenderExactly) {
  Registry r;
  CounterFamily& requests = r.AddCounter("x_requests_total", "Requests", {"rpc", "code"});
  GaugeFamily& up = r.AddGauge("x_up", "Up\nwith \\ newline");
  requests.WithLabels({"Run", "OK"}).Increment();
  requests.WithLabels({"Run", "OK"}).Increment(2);
  requests.WithLabels({"Add", "NOT_FOUND"}).Increment();
  up.Get().Set(0.5);
  EXPECT_EQ(r.Render(),
            "# HELP x_requests_total Requests\n"
            "# TYPE x_requests_total counter\n"
            "x_requests_total{rpc=\"Add\",code=\"NOT_FOUND\"} 1\n"
            "x_requests_total{rpc=\"Run\",code=\"OK\"} 3\n"
            "# HELP x_up Up\\nwith \\\\ newline\n"
            "# TYPE x_up gauge\n"
            "x_up 0.5\n");
}

TEST(PrometheusTest, UnlabelledFamiliesStartAtZero) {
  Registry r;
  r.AddCounter("c_total", "C");
  r.AddGauge("g", "G", {"device"});
  EXPECT_EQ(r.Render(), "# HELP c_total C\n# TYPE c_total counter\nc_total 0\n# HELP g G\n# TYPE g gauge\n");
}

TEST(PrometheusTest, HistogramBucketsAreCumulative) {
  Registry r;
  HistogramFamily& h = r.AddHistogram("d_seconds", "D", {"rpc"}, {0.5, 1});
  h.WithLabels({"a"}).Observe(0.25);
  h.WithLabels({"a"}).Observe(0.5);  // upper bounds are inclusive
  h.WithLabels({"a"}).Observe(4);
  EXPECT_EQ(r.Render(),
            "# HELP d_seconds D\n"
            "# TYPE d_seconds histogram\n"
            "d_seconds_bucket{rpc=\"a\",le=\"0.5\"} 2\n"
            "d_seconds_bucket{rpc=\"a\",le=\"1\"} 2\n"
            "d_seconds_bucket{rpc=\"a\",le=\"+Inf\"} 3\n"
            "d_seconds_sum{rpc=\"a\"} 4.75\n"
            "d_seconds_count{rpc=\"a\"} 3\n");
}

TEST(PrometheusTest, UnlabelledHistogramAndEscapedLabelValues) {
  Registry r;
  HistogramFamily& h = r.AddHistogram("h", "H", {}, {1});
  h.Get().Observe(2);
  GaugeFamily& g = r.AddGauge("g", "G", {"model"});
  g.WithLabels({"a\"b\\c\nd"}).Set(-1);
  EXPECT_EQ(r.Render(),
            "# HELP h H\n# TYPE h histogram\n"
            "h_bucket{le=\"1\"} 0\nh_bucket{le=\"+Inf\"} 1\nh_sum 2\nh_count 1\n"
            "# HELP g G\n# TYPE g gauge\n"
            "g{model=\"a\\\"b\\\\c\\nd\"} -1\n");
}

TEST(PrometheusTest, CollectorsRunBeforeRendering) {
  Registry r;
  GaugeFamily& g = r.AddGauge("q", "Q");
  int calls = 0;
  r.AddCollector([&] { g.Get().Set(++calls); });
  EXPECT_EQ(r.Render(), "# HELP q Q\n# TYPE q gauge\nq 1\n");
  EXPECT_EQ(r.Render(), "# HELP q Q\n# TYPE q gauge\nq 2\n");
}

TEST(PrometheusTest, FormatValue) {
  EXPECT_EQ(FormatValue(0), "0");
  EXPECT_EQ(FormatValue(1e21), "1e+21");
  EXPECT_EQ(FormatValue(0.1), "0.1");
  EXPECT_EQ(FormatValue(INFINITY), "+Inf");
  EXPECT_EQ(FormatValue(-INFINITY), "-Inf");
  EXPECT_EQ(FormatValue(NAN), "NaN");
}

}  // namespace
}  // namespace ge::server::prometheus
