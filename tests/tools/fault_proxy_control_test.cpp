// The fault proxy's control logic, without sockets: the command parser, the fault table and
// the forwarding rule.
#include "fault_proxy_control.hpp"

#include <gtest/gtest.h>

namespace s3lect::chaos {
namespace {

using namespace std::chrono_literals;

command parse_ok(std::string_view line) {
  auto parsed = parse_command(line);
  EXPECT_TRUE(std::holds_alternative<command>(parsed)) << line;
  return std::holds_alternative<command>(parsed) ? std::get<command>(parsed) : command{};
}

std::string parse_error(std::string_view line) {
  auto parsed = parse_command(line);
  EXPECT_TRUE(std::holds_alternative<std::string>(parsed)) << line;
  return std::holds_alternative<std::string>(parsed) ? std::get<std::string>(parsed) : "";
}

TEST(FaultProxyControl, ParsesEveryCommand) {
  auto c = parse_ok("latency node1 down 250");
  EXPECT_EQ(c.what, command::kind::latency);
  EXPECT_EQ(c.target, "node1");
  EXPECT_FALSE(c.up);
  EXPECT_TRUE(c.down);
  EXPECT_EQ(c.latency, 250ms);

  c = parse_ok("  blackhole global both on\r");
  EXPECT_EQ(c.what, command::kind::blackhole);
  EXPECT_TRUE(c.up && c.down && c.on);

  c = parse_ok("drop node2 off");
  EXPECT_EQ(c.what, command::kind::drop);
  EXPECT_FALSE(c.on);

  c = parse_ok("reset node1 client");
  EXPECT_EQ(c.what, command::kind::reset);
  EXPECT_EQ(c.side, reset_side::client);

  EXPECT_EQ(parse_ok("heal all").what, command::kind::heal);
  EXPECT_EQ(parse_ok("status").what, command::kind::status);
}

TEST(FaultProxyControl, RejectsMalformedCommands) {
  EXPECT_NE(parse_error("").find("empty"), std::string::npos);
  EXPECT_NE(parse_error("explode node1").find("unknown command"), std::string::npos);
  EXPECT_NE(parse_error("latency node1 sideways 10").find("up, down or both"), std::string::npos);
  EXPECT_NE(parse_error("latency node1 up -5").find("milliseconds"), std::string::npos);
  EXPECT_NE(parse_error("latency node1 up 10ms").find("milliseconds"), std::string::npos);
  EXPECT_NE(parse_error("blackhole node1 up maybe").find("on or off"), std::string::npos);
  EXPECT_NE(parse_error("reset node1 sideways").find("client, server or both"), std::string::npos);
  EXPECT_NE(parse_error("heal").find("missing target"), std::string::npos);
  EXPECT_NE(parse_error("drop node1 on extra").find("usage"), std::string::npos);
}

TEST(FaultProxyControl, ForwardTimeAppliesLatencyPerDirectionAndHoldsBlackholes) {
  const auto t0 = clock::now();
  fault_state s;
  s.up.latency = 100ms;
  EXPECT_EQ(forward_time(s, direction::up, t0), t0 + 100ms);
  EXPECT_EQ(forward_time(s, direction::down, t0), t0);
  s.down.blackhole = true;
  EXPECT_FALSE(forward_time(s, direction::down, t0));
  EXPECT_EQ(forward_time(s, direction::up, t0), t0 + 100ms);
}

TEST(FaultProxyControl, GlobalFaultsAddToEachListener) {
  fault_table table({"node1", "node2"});
  EXPECT_EQ(table.apply(parse_ok("latency node1 both 100")).reply.substr(0, 2), "ok");
  table.apply(parse_ok("latency global up 50"));
  table.apply(parse_ok("blackhole global down on"));
  const fault_state one = table.effective("node1");
  EXPECT_EQ(one.up.latency, 150ms);
  EXPECT_EQ(one.down.latency, 100ms);
  EXPECT_TRUE(one.down.blackhole);
  const fault_state two = table.effective("node2");
  EXPECT_EQ(two.up.latency, 50ms);
  EXPECT_TRUE(two.down.blackhole);
  EXPECT_FALSE(two.up.blackhole);
}

TEST(FaultProxyControl, HealRemovesFaultsOfItsTargetOnly) {
  fault_table table({"node1", "node2"});
  table.apply(parse_ok("drop node1 on"));
  table.apply(parse_ok("drop node2 on"));
  table.apply(parse_ok("latency global both 10"));
  table.apply(parse_ok("heal node1"));
  EXPECT_FALSE(table.effective("node1").drop_new);
  EXPECT_EQ(table.effective("node1").up.latency, 10ms);
  EXPECT_TRUE(table.effective("node2").drop_new);
  table.apply(parse_ok("heal all"));
  EXPECT_TRUE(table.effective("node1").healthy());
  EXPECT_TRUE(table.effective("node2").healthy());
}

TEST(FaultProxyControl, ResetNamesTheListenersToAbort) {
  fault_table table({"node1", "node2"});
  auto out = table.apply(parse_ok("reset node2 server"));
  EXPECT_EQ(out.reset_listeners, std::vector<std::string>{"node2"});
  EXPECT_EQ(out.side, reset_side::server);
  out = table.apply(parse_ok("reset all both"));
  EXPECT_EQ(out.reset_listeners, (std::vector<std::string>{"node1", "node2"}));
  EXPECT_TRUE(table.effective("node1").healthy());  // a reset is an action, not a state
}

TEST(FaultProxyControl, UnknownTargetsAreRefused) {
  fault_table table({"node1"});
  EXPECT_EQ(table.apply(parse_ok("drop node9 on")).reply, "error unknown target node9");
  EXPECT_EQ(table.apply(parse_ok("drop all on")).reply, "error unknown target all");
  EXPECT_EQ(table.apply(parse_ok("reset node9 both")).reply, "error unknown listener node9");
}

TEST(FaultProxyControl, StatusDescribesEveryListener) {
  fault_table table({"node1"});
  table.apply(parse_ok("blackhole node1 up on"));
  EXPECT_EQ(table.apply(parse_ok("status")).reply,
            "ok global: up=0ms down=0ms drop=off; node1: up=0ms/blackhole down=0ms drop=off");
}

}  // namespace
}  // namespace s3lect::chaos
