// Who may hold a connection (connection_admission) and the rate-limited log of what was
// dropped (dropped_connection_report), without sockets: "now" is passed in.
#include "connection_admission.hpp"
#include "dropped_connection_report.hpp"

#include <s3lect/metrics.hpp>

#include <gtest/gtest.h>

#include <chrono>

namespace {

using namespace std::chrono_literals;
using s3lect::detail::connection_admission;
using s3lect::detail::dropped_connection_report;
using s3lect::detail::dropped_kind;
using s3lect::detail::refusal_reason;
using s3lect::detail::source_of;

s3lect::detail::source_key key(const char* address) {
  return source_of(boost::asio::ip::make_address(address));
}

TEST(ConnectionAdmission, OneAddressHoldsAtMostItsShareAndGivesItBack) {
  connection_admission admission(10, 2);
  EXPECT_FALSE(admission.admit(key("127.0.0.2")));
  EXPECT_FALSE(admission.admit(key("127.0.0.2")));
  EXPECT_EQ(admission.admit(key("127.0.0.2")), refusal_reason::per_source);
  EXPECT_FALSE(admission.admit(key("127.0.0.1"))) << "another address still gets in";
  admission.release(key("127.0.0.2"), false);
  EXPECT_FALSE(admission.admit(key("127.0.0.2")));
  EXPECT_EQ(admission.general_connections(), 3u);
}

TEST(ConnectionAdmission, AnIpv6HostCountsByItsSlash64AndMappedIpv4AsIpv4) {
  connection_admission admission(10, 1);
  EXPECT_FALSE(admission.admit(key("2001:db8:1:2::1")));
  EXPECT_EQ(admission.admit(key("2001:db8:1:2:ffff::9")), refusal_reason::per_source);
  EXPECT_FALSE(admission.admit(key("2001:db8:1:3::1")));
  EXPECT_FALSE(admission.admit(key("192.0.2.7")));
  EXPECT_EQ(admission.admit(key("::ffff:192.0.2.7")), refusal_reason::per_source);
}

TEST(ConnectionAdmission, WatchesLeaveTheGeneralPoolButCountPerSource) {
  connection_admission admission(1, 2);
  EXPECT_FALSE(admission.admit(key("10.0.0.1")));
  admission.begin_watch();
  EXPECT_FALSE(admission.admit(key("10.0.0.1"))) << "the watch freed its slot";
  EXPECT_EQ(admission.admit(key("10.0.0.2")), refusal_reason::max_connections);
  EXPECT_EQ(admission.watches(), 1u);
  EXPECT_FALSE(admission.end_watch()) << "back in a full pool: the connection should close";
  admission.release(key("10.0.0.1"), false);
  admission.release(key("10.0.0.1"), false);
  EXPECT_EQ(admission.general_connections(), 0u);
  EXPECT_FALSE(admission.admit(key("10.0.0.1")));
}

TEST(DroppedConnectionReport, LogsTheFirstAtOnceThenOneLinePerIntervalWithTheCounts) {
  using clock = dropped_connection_report::clock;
  dropped_connection_report report(5s);
  const clock::time_point t0{};
  const auto first = report.count(dropped_kind::refused_per_source, "127.0.0.2", t0);
  ASSERT_TRUE(first);
  EXPECT_TRUE(first->refusals());
  EXPECT_FALSE(report.flush_at());
  for (int i = 0; i < 1000; ++i) {
    EXPECT_FALSE(report.count(dropped_kind::refused_per_source, "127.0.0.2", t0 + 1s));
  }
  EXPECT_FALSE(report.count(dropped_kind::first_request_timeout, "127.0.0.3", t0 + 2s));
  ASSERT_EQ(report.flush_at(), t0 + 5s);
  EXPECT_FALSE(report.flush(t0 + 4s));
  const auto second = report.flush(t0 + 5s);
  ASSERT_TRUE(second);
  EXPECT_EQ(second->describe(),
            "refused_max_connections=0 refused_per_source=1000 refused_file_descriptors=0 "
            "first_request_timeouts=1 failed_handshakes=0 interval_ms=5000 "
            "last_source=127.0.0.3");
  EXPECT_FALSE(report.flush(t0 + 20s)) << "nothing held";
  const auto quiet = report.count(dropped_kind::failed_handshake, "127.0.0.4", t0 + 20s);
  ASSERT_TRUE(quiet) << "after a quiet interval the next one is logged at once";
  EXPECT_FALSE(quiet->refusals());
}

TEST(ServerMetrics, RendersEveryCounterWithTheServerAndReasonLabels) {
  s3lect::server_metrics health;
  health.labels = {{"lock", "k"}, {"id", "a"}};
  health.server = "health";
  health.stats.accepted_connections = 12;
  health.stats.refused_per_source = 7;
  health.stats.first_request_timeouts = 3;
  health.stats.active_watches = 2;
  s3lect::server_metrics metrics = health;
  metrics.server = "metrics";
  metrics.stats = {};
  const std::string text = s3lect::prometheus_text({health, metrics});
  for (const char* line : {
           "# TYPE s3lect_server_connections_refused_total counter\n",
           "s3lect_server_connections_accepted_total{lock=\"k\",id=\"a\",server=\"health\"} 12\n",
           "s3lect_server_connections_refused_total{lock=\"k\",id=\"a\",server=\"health\","
           "reason=\"per_source\"} 7\n",
           "s3lect_server_connections_refused_total{lock=\"k\",id=\"a\",server=\"metrics\","
           "reason=\"max_connections\"} 0\n",
           "s3lect_server_first_request_timeouts_total{lock=\"k\",id=\"a\",server=\"health\"} 3\n",
           "s3lect_server_watches{lock=\"k\",id=\"a\",server=\"health\"} 2\n",
       }) {
    EXPECT_NE(text.find(line), std::string::npos) << line << "\nin:\n" << text;
  }
  EXPECT_EQ(text.find("# TYPE s3lect_server_connections_refused_total"),
            text.rfind("# TYPE s3lect_server_connections_refused_total"))
      << "one TYPE line per family";
}

}  // namespace
