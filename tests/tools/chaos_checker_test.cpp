// The chaos checker's rules on hand-made logs: clean runs pass, and every kind of violation
// (overlapping leaders, terms out of order or reused, a leader missing for too long, a time from
// another clock) is caught with its evidence. With a tree watcher, a job lasts until its whole
// process tree is gone, and only a stopped node (not a frozen s3lect) opens a resume window.
#include "chaos_checker_core.hpp"

#include <gtest/gtest.h>

#include <sstream>

namespace s3lect::chaos {
namespace {

// Default harness timings: B = 600 + 900 + 2000 + 900 + 300 + 200 + 1000 = 5900 ms,
// R = 200 + 1000 = 1200 ms.
chaos_report check(const std::string& text, chaos_log* parsed = nullptr) {
  std::istringstream in(text);
  chaos_log log = parse_chaos_log(in);
  auto report = check_chaos_log(log, checker_timings{});
  if (parsed) *parsed = log;
  return report;
}

// A job's two log lines: `node` started its command (process `pid`) for `term` at time `start`,
// and the command ended at time `end`.
std::string job(const std::string& node, int term, const std::string& start, const std::string& end,
                int pid) {
  const std::string node_and_term = node + " " + std::to_string(term) + " ";
  const std::string process = " " + std::to_string(pid) + "\n";
  return "start " + node_and_term + start + process + "end " + node_and_term + end + process;
}

std::vector<std::string> rules(const chaos_report& report) {
  std::vector<std::string> out;
  for (const auto& v : report.violations) out.push_back(v.rule);
  return out;
}

TEST(ChaosChecker, ACommandThatTookADescriptorOfItsGuardiansIsAViolation) {
  const std::string clean = "begin 100.0\n" + job("node1", 1, "100.1", "101.0", 2) +
                            "thief node1 1 100.2 0\n"
                            "finish 102.0\n";
  chaos_log parsed;
  const auto passed = check(clean, &parsed);
  EXPECT_TRUE(passed.violations.empty()) << format_report(passed, parsed);
  EXPECT_EQ(passed.thefts_tried, 1U);
  const auto robbed = check("begin 100.0\n" + job("node1", 1, "100.1", "101.0", 2) +
                            "thief node1 1 100.2 7\n"
                            "finish 102.0\n");
  EXPECT_EQ(rules(robbed), std::vector<std::string>{"theft"});
  ASSERT_EQ(robbed.violations.size(), 1U);
  EXPECT_EQ(robbed.violations[0].evidence.size(), 1U);
  EXPECT_EQ(rules(check("begin 100.0\nthief node1 x 100.2 0\nfinish 102.0\n")),
            std::vector<std::string>{"log"});
}

TEST(ChaosChecker, AClaimFloodMustMoveNothingAndMustHaveReachedANode) {
  const std::string jobs = "begin 100.0\n" + job("node1", 1, "100.1", "101.0", 2);
  chaos_log parsed;
  const auto passed = check(jobs + "claimflood 101.5 flood- 12 11 0\nfinish 102.0\n", &parsed);
  EXPECT_TRUE(passed.violations.empty()) << format_report(passed, parsed);
  EXPECT_EQ(passed.forged_claims, 12U);
  EXPECT_EQ(passed.forged_answered, 11U);
  const auto named = check(jobs + "claimflood 101.5 flood- 12 11 1\nfinish 102.0\n");
  EXPECT_EQ(rules(named), std::vector<std::string>{"claim_flood"});
  ASSERT_EQ(named.violations.size(), 1U);
  EXPECT_EQ(named.violations[0].evidence.size(), 1U);
  // A flood nobody answered proved nothing.
  EXPECT_EQ(rules(check(jobs + "claimflood 101.5 flood- 12 0 0\nfinish 102.0\n")),
            std::vector<std::string>{"claim_flood"});
  // A forged id never leads.
  const auto led = check("begin 100.0\n" + job("flood-7", 1, "100.1", "101.0", 2) +
                         "claimflood 101.5 flood- 12 11 0\nfinish 102.0\n");
  EXPECT_EQ(rules(led), std::vector<std::string>{"claim_flood"});
  EXPECT_EQ(rules(check(jobs + "claimflood 101.5 flood- 12 x 0\nfinish 102.0\n")),
            std::vector<std::string>{"log"});
}

TEST(ChaosChecker, BoundsFollowFromTheTimings) {
  const checker_timings t;
  EXPECT_EQ(t.retry_schedule(), 900'000);
  EXPECT_EQ(t.liveness_bound(), 5'900'000);
  EXPECT_EQ(t.resume_window(), 1'200'000);
}

TEST(ChaosChecker, CleanHandoversPass) {
  const auto report = check("begin 100.4\n" + job("node1", 1, "100.5", "103.0", 11) +
                            "start node2 2 103.2 22\n"
                            "fault term node1 102.9 104.0\n"
                            "end node2 2 110.0 22\n"
                            "finish 110.1\n");
  EXPECT_TRUE(report.violations.empty()) << format_report(report, {});
  EXPECT_EQ(report.leaderships, 2u);
  EXPECT_EQ(report.transitions(), 1u);
  EXPECT_EQ(report.faults_by_kind.at("term"), 1u);
  EXPECT_EQ(report.max_gap, 200'000);  // 103.0 to 103.2
  EXPECT_EQ(report.min_separation, 200'000);
}

TEST(ChaosChecker, CatchesOverlappingLeaders) {
  chaos_log log;
  const auto report = check(
      "begin 100.0\n"
      "start node1 1 100.5 11\n"
      "start node2 2 103.0 22\n"
      "end node1 1 103.4 11\n"
      "end node2 2 106.0 22\n"
      "finish 106.1\n",
      &log);
  ASSERT_EQ(rules(report), std::vector<std::string>{"overlap"}) << format_report(report, log);
  const auto& v = report.violations[0];
  EXPECT_NE(v.message.find("400.0 ms"), std::string::npos) << v.message;
  ASSERT_EQ(v.evidence.size(), 4u);  // both starts and both ends, as line numbers and text
  EXPECT_EQ(v.evidence[0].number, 2);
  EXPECT_EQ(v.evidence[0].text, "start node1 1 100.5 11");
  EXPECT_NE(format_report(report, log).find("chaos check: FAIL"), std::string::npos);
}

TEST(ChaosChecker, EvenAMicrosecondOfOverlapIsAViolation) {
  const auto report = check("begin 100.0\n" + job("node1", 1, "100.5", "103.000001", 11) +
                            job("node2", 2, "103.000000", "104.0", 22) + "finish 104.0\n");
  EXPECT_EQ(rules(report), std::vector<std::string>{"overlap"});
}

TEST(ChaosChecker, AStoppedLeaderDoesNotRunWhileStopped) {
  // node1 is stopped from 101 to 105; node2 leads from 103.5 to 104.5, entirely inside.
  const auto report = check(
      "begin 100.0\n"
      "start node1 1 100.5 11\n"
      "stop node1 101.0 105.0\n" +
      job("node2", 2, "103.5", "104.5", 22) +
      "end node1 1 105.1 11\n"
      "finish 110.0\n");
  EXPECT_TRUE(report.violations.empty()) << format_report(report, {});
}

TEST(ChaosChecker, AResumedLeaderMayOverlapOnlyWithinTheResumeWindow) {
  // node1 resumes at 105.0 and its command stops 0.3 s later, while node2 (term 2) leads:
  // excused, since R = 1.2 s.
  const auto excused = check(
      "begin 100.0\n"
      "start node1 1 100.5 11\n"
      "stop node1 101.0 105.0\n"
      "start node2 2 104.0 22\n"
      "end node1 1 105.3 11\n"
      "end node2 2 108.0 22\n"
      "finish 108.0\n");
  EXPECT_TRUE(excused.violations.empty()) << format_report(excused, {});
  EXPECT_EQ(excused.excused_overlaps, 1u);
  EXPECT_EQ(excused.max_excused_overlap, 300'000);

  // The same, but node1's command outlives the window: a violation.
  chaos_log log;
  const auto late = check(
      "begin 100.0\n"
      "start node1 1 100.5 11\n"
      "stop node1 101.0 105.0\n"
      "start node2 2 104.0 22\n"
      "end node1 1 106.5 11\n"
      "end node2 2 108.0 22\n"
      "finish 108.0\n",
      &log);
  ASSERT_EQ(rules(late), std::vector<std::string>{"overlap"}) << format_report(late, log);
  EXPECT_NE(late.violations[0].message.find("300.0 ms"), std::string::npos)
      << late.violations[0].message;  // 106.5 - (105.0 + 1.2)
  EXPECT_EQ(late.violations[0].evidence.back().text, "stop node1 101.0 105.0");
}

TEST(ChaosChecker, TheWindowExcusesOnlyTheOlderTerm) {
  // node2 (the newer term) was stopped and resumed; node1's older-term command still runs:
  // nothing excuses node1.
  const auto report = check(
      "begin 100.0\n"
      "start node1 1 100.5 11\n"
      "start node2 2 101.0 22\n"
      "stop node2 101.1 102.0\n"
      "end node1 1 102.5 11\n"
      "end node2 2 104.0 22\n"
      "finish 104.0\n");
  EXPECT_EQ(rules(report), std::vector<std::string>{"overlap"});
}

TEST(ChaosChecker, CatchesTermsOutOfOrder) {
  const auto report = check("begin 100.0\n" + job("node1", 5, "100.5", "101.0", 11) +
                            job("node2", 4, "101.5", "102.0", 22) + "finish 102.0\n");
  EXPECT_EQ(rules(report), std::vector<std::string>{"term_order"});
}

TEST(ChaosChecker, ToleratesAStaleStartInsideTheResumeWindow) {
  // node1 was stopped between learning it won term 1 and starting its command; by the time it
  // resumed node2 held term 2. It starts and stops the stale command within R of SIGCONT.
  const auto report = check(
      "begin 100.0\n"
      "stop node1 100.2 104.0\n"
      "start node2 2 103.0 22\n" +
      job("node1", 1, "104.01", "104.2", 11) +
      "end node2 2 106.0 22\n"
      "finish 106.0\n");
  EXPECT_TRUE(report.violations.empty()) << format_report(report, {});
  EXPECT_EQ(report.stale_starts, 1u);
  EXPECT_EQ(report.excused_overlaps, 1u);
}

TEST(ChaosChecker, ANodeMayRunItsOwnTermAgainAfterItsCommandStopped) {
  // node1 demoted, then its late renewal landed and it led again under the same term.
  const auto report = check("begin 100.0\n" + job("node1", 3, "100.5", "101.0", 11) +
                            job("node1", 3, "101.5", "102.0", 12) + "finish 102.0\n");
  EXPECT_TRUE(report.violations.empty()) << format_report(report, {});
  EXPECT_EQ(report.resumed_terms, 1u);

  // But never at the same time.
  const auto overlapping = check(
      "begin 100.0\n"
      "start node1 3 100.5 11\n"
      "start node1 3 100.9 12\n"
      "end node1 3 101.0 11\n"
      "end node1 3 102.0 12\n"
      "finish 102.0\n");
  EXPECT_EQ(rules(overlapping), std::vector<std::string>{"overlap"});
}

TEST(ChaosChecker, ATermNeverComesBackOnceAnotherNodeLedAfterIt) {
  // node1 leads term 5, node2 term 6, then node1 term 5 again: its term went backwards, however
  // far apart the commands ran.
  chaos_log log;
  const auto report = check("begin 100.0\n" + job("node1", 5, "100.5", "101.0", 11) +
                                job("node2", 6, "101.5", "102.0", 22) +
                                job("node1", 5, "102.5", "103.0", 12) + "finish 103.0\n",
                            &log);
  ASSERT_EQ(rules(report), std::vector<std::string>{"term_order"}) << format_report(report, log);
  EXPECT_EQ(report.violations[0].message, "term 5 (node1) started after term 6 (node2)");
  EXPECT_EQ(report.resumed_terms, 0u);
}

TEST(ChaosChecker, ATermComesBackOnlyRightAfterItsNodesPreviousCommand) {
  // node1's term 3 again after node2's command started, even with node2 under a lower term (a
  // violation of its own): the term was used up.
  chaos_log log;
  const auto report = check("begin 100.0\n" + job("node1", 3, "100.5", "101.0", 11) +
                                job("node2", 2, "101.2", "101.4", 22) +
                                job("node1", 3, "101.5", "102.0", 12) + "finish 102.0\n",
                            &log);
  ASSERT_EQ(rules(report), (std::vector<std::string>{"term_order", "term_order"}))
      << format_report(report, log);
  EXPECT_EQ(report.violations[1].message,
            "term 3 (node1) started again after node2's term 2 had started");
  ASSERT_EQ(report.violations[1].evidence.size(), 3u);
  EXPECT_EQ(report.violations[1].evidence[1].text, "start node2 2 101.2 22");

  // A stale start in between (a resumed node's outdated command) does not use the term up: the
  // lock was node1's all along.
  const auto stale_between = check(
      "begin 100.0\n"
      "stop node2 100.2 101.1\n" +
      job("node1", 3, "100.5", "101.0", 11) + job("node2", 2, "101.2", "101.3", 22) +
      job("node1", 3, "101.5", "102.0", 12) + "finish 102.0\n");
  EXPECT_TRUE(stale_between.violations.empty()) << format_report(stale_between, {});
  EXPECT_EQ(stale_between.stale_starts, 1u);
  EXPECT_EQ(stale_between.resumed_terms, 1u);
}

TEST(ChaosChecker, CatchesATermUsedByTwoNodes) {
  const auto report = check("begin 100.0\n" + job("node1", 3, "100.5", "101.0", 11) +
                            job("node2", 3, "101.5", "102.0", 22) + "finish 102.0\n");
  const auto found = rules(report);
  EXPECT_NE(std::find(found.begin(), found.end(), "term_reuse"), found.end());
}

TEST(ChaosChecker, TwoCommandsOfOneTermInsideAResumeWindowAreAnOverlap) {
  // node2 runs node1's term while node1 is stopped and just after it resumes: the window
  // excuses only an older term, so this is an overlap (it used to crash the checker).
  chaos_log log;
  const auto report = check(
      "begin 100.0\n"
      "start node1 3 100.5 11\n"
      "stop node1 101.0 105.0\n"
      "start node2 3 104.0 22\n"
      "end node1 3 105.3 11\n"
      "end node2 3 108.0 22\n"
      "finish 108.0\n",
      &log);
  const auto found = rules(report);
  EXPECT_NE(std::find(found.begin(), found.end(), "overlap"), found.end())
      << format_report(report, log);
}

TEST(ChaosChecker, CatchesALeaderMissingLongerThanTheBound) {
  // A kill at 101 ends at 101.5; with B = 5.9 s a leader must be back by 107.4.
  chaos_log log;
  const auto report = check(
      "begin 100.0\n"
      "start node1 1 100.5 11\n"
      "kill node1 101.0\n"
      "fault kill node1 101.0 101.5 crash\n" +
          job("node2", 2, "108.4", "110.0", 22) + "finish 110.0\n",
      &log);
  ASSERT_EQ(rules(report), std::vector<std::string>{"liveness"}) << format_report(report, log);
  EXPECT_EQ(report.max_gap, 7'400'000);
  EXPECT_EQ(report.max_excess, 1'000'000);

  const auto in_time = check(
      "begin 100.0\n"
      "start node1 1 100.5 11\n"
      "kill node1 101.0\n"
      "fault kill node1 101.0 101.5 crash\n" +
      job("node2", 2, "107.3", "110.0", 22) + "finish 110.0\n");
  EXPECT_TRUE(in_time.violations.empty()) << format_report(in_time, {});
}

TEST(ChaosChecker, AKilledCommandEndsAtTheKill) {
  // No end record: the kill record ends node1's command, so node2 does not overlap it.
  const auto report = check(
      "begin 100.0\n"
      "start node1 1 100.5 11\n"
      "kill node1 101.0\n"
      "fault kill node1 101.0 101.5 crash\n" +
      job("node2", 2, "103.0", "104.0", 22) + "finish 104.0\n");
  EXPECT_TRUE(report.violations.empty()) << format_report(report, {});

  // Reaped by s3lect after the kill grace: ends when s3lect logged it.
  const auto reaped = check(
      "begin 100.0\n"
      "start node1 1 100.5 11\n" +
      job("node2", 2, "103.0", "104.0", 22) +
      "reaped node1 11 102.9\n"
      "finish 104.0\n");
  EXPECT_TRUE(reaped.violations.empty()) << format_report(reaped, {});
}

TEST(ChaosChecker, ACommandThatNeverEndsIsReported) {
  const auto report = check(
      "begin 100.0\n"
      "start node1 1 100.5 11\n"
      "finish 104.0\n");
  EXPECT_EQ(rules(report), std::vector<std::string>{"log"});
}

TEST(ChaosChecker, MalformedLinesAreReported) {
  const auto report = check(
      "begin 100.0\n"
      "start node1 one 100.5 11\n"
      "bogus\n"
      "finish 104.0\n");
  EXPECT_EQ(rules(report), (std::vector<std::string>{"log", "log"}));
}

TEST(ChaosChecker, ATimeOutsideTheRunIsFromAnotherClock) {
  // node1's command ran on a clock five minutes ahead (libfaketime leaked into it): its records
  // say nothing about when it ran.
  chaos_log log;
  const auto report = check("begin 100.0\n" + job("node1", 1, "400.5", "401.0", 11) +
                                job("node2", 2, "101.5", "102.0", 22) +
                                "reaped node3 33 102.9\n"
                                "finish 103.0\n",
                            &log);
  ASSERT_EQ(rules(report), (std::vector<std::string>{"log", "log", "term_order"}))
      << format_report(report, log);
  EXPECT_NE(report.violations[0].message.find("line 2: time after finish"), std::string::npos)
      << report.violations[0].message;

  // A second of slack, for times rounded up.
  const auto rounded = check(
      "begin 100.0\n"
      "start node1 1 100.5 11\n"
      "reaped node1 11 104.0009\n"
      "finish 104.0\n");
  EXPECT_TRUE(rounded.violations.empty()) << format_report(rounded, {});
}

TEST(ChaosChecker, AGrandchildOutlivingItsCommandOverlapsTheNextJob) {
  // node1's command wrote its end at 103.0, but a daemon it started lived until 104.0, into
  // node2's job.
  chaos_log log;
  const auto report = check(
      "begin 100.0\n"
      "treewatch 127.0.0.1:4000\n" +
          job("node1", 1, "100.5", "103.0", 11) +
          "start node2 2 103.2 22\n"
          "treeend node1 1 11 104.0\n"
          "end node2 2 106.0 22\n"
          "treeend node2 2 22 106.001\n"
          "finish 106.1\n",
      &log);
  ASSERT_EQ(rules(report), std::vector<std::string>{"overlap"}) << format_report(report, log);
  const auto& v = report.violations[0];
  EXPECT_NE(v.message.find("800.0 ms"), std::string::npos) << v.message;
  ASSERT_EQ(v.evidence.size(), 6u);  // each job's start, its command's end and its tree's end
  EXPECT_EQ(v.evidence[1].text, "end node1 1 103.0 11");
  EXPECT_EQ(v.evidence[2].text, "treeend node1 1 11 104.0");
  EXPECT_EQ(log.children[0].end_source, "treeend");

  // The same with the daemon gone before node2 started: a clean handover.
  const auto clean = check(
      "begin 100.0\n"
      "treewatch 127.0.0.1:4000\n" +
      job("node1", 1, "100.5", "103.0", 11) + "treeend node1 1 11 103.1\n" +
      job("node2", 2, "103.2", "106.0", 22) +
      "treeend node2 2 22 106.001\n"
      "finish 106.1\n");
  EXPECT_TRUE(clean.violations.empty()) << format_report(clean, {});
  EXPECT_EQ(clean.min_separation, 100'000);  // from the tree's end, not the command's
}

TEST(ChaosChecker, ATreeOutlivingALoneKillOfS3lectOverlapsTheNextJob) {
  // node1's s3lect alone was SIGKILLed at 101.0; its command died with it, a grandchild did
  // not, and ran until 104.0 while node2 led from 103.5.
  chaos_log log;
  const auto report = check(
      "begin 100.0\n"
      "treewatch 127.0.0.1:4000\n"
      "start node1 1 100.5 11\n"
      "fault kill node1 101.0 101.8 s3lect-only\n"
      "start node2 2 103.5 22\n"
      "treeend node1 1 11 104.0\n"
      "end node2 2 106.0 22\n"
      "treeend node2 2 22 106.0\n"
      "finish 106.0\n",
      &log);
  ASSERT_EQ(rules(report), std::vector<std::string>{"overlap"}) << format_report(report, log);
  EXPECT_NE(report.violations[0].message.find("500.0 ms"), std::string::npos)
      << report.violations[0].message;
  EXPECT_EQ(report.lone_kills, 1u);
  ASSERT_EQ(report.lone_faults.size(), 1u);
  EXPECT_EQ(report.lone_faults[0].tree_gone_after, 3'000'000);

  // The tree killed with s3lect: no overlap, and the time it took is reported.
  const auto guarded = check(
      "begin 100.0\n"
      "treewatch 127.0.0.1:4000\n"
      "start node1 1 100.5 11\n"
      "fault kill node1 101.0 101.8 s3lect-only\n"
      "treeend node1 1 11 101.004\n" +
          job("node2", 2, "103.5", "106.0", 22) +
          "treeend node2 2 22 106.0\n"
          "finish 106.0\n",
      &log);
  EXPECT_TRUE(guarded.violations.empty()) << format_report(guarded, log);
  ASSERT_EQ(guarded.lone_faults.size(), 1u);
  EXPECT_EQ(guarded.lone_faults[0].kind, "kill");
  EXPECT_EQ(guarded.lone_faults[0].tree_gone_after, 4'000);
  EXPECT_NE(format_report(guarded, log)
                .find("s3lect killed alone: 1\n  node1 at 1.000 s: its "
                      "job's tree was gone 4.0 ms after\n"),
            std::string::npos)
      << format_report(guarded, log);
}

TEST(ChaosChecker, AFreezeOfS3lectAloneOpensNoResumeWindow) {
  // node1's s3lect was frozen from 101 to 105 while its job ran on; node2 led from 104.0. The
  // job never stopped, so every moment of the overlap counts (a stop would excuse it: below).
  chaos_log log;
  const std::string freeze_log =
      "begin 100.0\n"
      "treewatch 127.0.0.1:4000\n"
      "start node1 1 100.5 11\n"
      "freeze node1 101.0 105.0\n"
      "start node2 2 104.0 22\n"
      "end node1 1 105.3 11\n"
      "treeend node1 1 11 105.3\n"
      "end node2 2 108.0 22\n"
      "treeend node2 2 22 108.0\n"
      "finish 108.0\n";
  const auto report = check(freeze_log, &log);
  ASSERT_EQ(rules(report), std::vector<std::string>{"overlap"}) << format_report(report, log);
  EXPECT_NE(report.violations[0].message.find("1300.0 ms"), std::string::npos)
      << report.violations[0].message;
  EXPECT_EQ(report.excused_overlaps, 0u);
  EXPECT_EQ(report.faults_by_kind.at("freeze"), 1u);
  EXPECT_EQ(report.lone_freezes, 1u);
  ASSERT_EQ(report.lone_faults.size(), 1u);
  EXPECT_EQ(report.lone_faults[0].tree_gone_after, 4'300'000);
  EXPECT_TRUE(report.lone_faults[0].outlived);

  // The same times as a stop of the whole node: node1's job did not run from 101 to 105, and
  // the 300 ms after it resumed are inside its resume window.
  std::string stop_log = freeze_log;
  stop_log.replace(stop_log.find("freeze"), 6, "stop");
  const auto stopped = check(stop_log, &log);
  EXPECT_TRUE(stopped.violations.empty()) << format_report(stopped, log);
  EXPECT_EQ(stopped.excused_overlaps, 1u);
  EXPECT_EQ(stopped.lone_freezes, 0u);
}

TEST(ChaosChecker, AFreezeIsAFaultForTheLivenessBound) {
  // The guardian ended node1's tree 1.4 s into the freeze; nobody led until 110.0, 7.6 s
  // later, but within B of the freeze's end (107.0 + 5.9 s).
  chaos_log log;
  const auto report = check(
      "begin 100.0\n"
      "treewatch 127.0.0.1:4000\n"
      "start node1 1 100.5 11\n"
      "freeze node1 101.0 107.0\n"
      "treeend node1 1 11 102.4\n" +
          job("node2", 2, "110.0", "111.0", 22) +
          "treeend node2 2 22 111.0\n"
          "finish 111.0\n",
      &log);
  EXPECT_TRUE(report.violations.empty()) << format_report(report, log);
  ASSERT_EQ(report.lone_faults.size(), 1u);
  EXPECT_EQ(report.lone_faults[0].tree_gone_after, 1'400'000);
  EXPECT_FALSE(report.lone_faults[0].outlived);
}

TEST(ChaosChecker, ALoneFaultConcernsTheJobOfTheS3lectItHit) {
  // A daemon of node1's term-1 job still runs when node1's s3lect, leading again, is killed
  // alone: the fault's outcome is about the term-2 job (an overlap of the two is reported too).
  chaos_log log;
  const auto report = check(
      "begin 100.0\n"
      "treewatch 127.0.0.1:4000\n" +
          job("node1", 1, "100.5", "101.0", 11) +
          "start node1 2 101.5 12\n"
          "fault kill node1 102.0 102.5 s3lect-only\n"
          "treeend node1 2 12 102.01\n"
          "treeend node1 1 11 103.0\n"
          "finish 103.0\n",
      &log);
  ASSERT_EQ(report.lone_faults.size(), 1u) << format_report(report, log);
  EXPECT_EQ(report.lone_faults[0].tree_gone_after, 10'000);
  EXPECT_EQ(rules(report), std::vector<std::string>{"overlap"});

  // node1's s3lect was killed alone and restarted at 101.3; frozen at 102.0 before it led
  // again, it had no job: the tree still running is its predecessor's.
  const auto restarted = check(
      "begin 100.0\n"
      "treewatch 127.0.0.1:4000\n"
      "start node1 1 100.5 11\n"
      "fault kill node1 101.0 101.3 s3lect-only\n"
      "freeze node1 102.0 102.5\n"
      "treeend node1 1 11 103.0\n"
      "finish 103.0\n",
      &log);
  EXPECT_EQ(restarted.lone_freezes, 1u);
  ASSERT_EQ(restarted.lone_faults.size(), 1u) << format_report(restarted, log);
  EXPECT_EQ(restarted.lone_faults[0].kind, "kill");
}

TEST(ChaosChecker, WithATreeWatcherEveryJobNeedsItsTreesEnd) {
  // node2's tree was never seen to end: its end record says nothing about its grandchildren.
  // A tree whose command died before its start record (node3) is counted, not checked.
  chaos_log log;
  const auto report = check(
      "begin 100.0\n"
      "treewatch 127.0.0.1:4000\n" +
          job("node1", 1, "100.5", "101.0", 11) + "treeend node1 1 11 101.0\n" +
          job("node2", 2, "101.5", "102.0", 22) +
          "treeend node3 3 33 102.5\n"
          "finish 103.0\n",
      &log);
  ASSERT_EQ(rules(report), std::vector<std::string>{"log"}) << format_report(report, log);
  EXPECT_NE(report.violations[0].message.find("line 6: no treeend"), std::string::npos)
      << report.violations[0].message;
  EXPECT_EQ(log.unmatched_tree_ends, 1u);
}

TEST(ChaosChecker, AnEndWithoutStartIsACommandThatNeverWorked) {
  chaos_log log;
  const auto report = check(
      "begin 100.0\n"
      "end node1 1 100.5 11\n" +
          job("node2", 2, "100.6", "101.0", 22) + "finish 101.0\n",
      &log);
  EXPECT_TRUE(report.violations.empty()) << format_report(report, log);
  EXPECT_EQ(log.aborted_starts, 1u);
}

}  // namespace
}  // namespace s3lect::chaos
