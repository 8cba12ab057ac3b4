#include "liveness.hpp"

#include <string>

namespace s3lect::inline v1::detail {

namespace {

using std::chrono::duration_cast;
using std::chrono::milliseconds;

std::string ms(milliseconds duration) {
  return std::to_string(duration.count()) + " ms";
}

liveness_report not_live(liveness_report report, liveness_problem problem,
                         std::string description) {
  report.live = false;
  report.ready = false;
  report.problem = problem;
  report.description = "stuck: " + description;
  return report;
}

}  // namespace

liveness_limits resolved_limits(liveness_limits limits, const elector_config& config) {
  if (limits.max_loop_stall <= milliseconds::zero()) {
    limits.max_loop_stall =
        2 * (config.infrequent_interval + config.retry.worst_case(config.request_timeout));
  }
  return limits;
}

liveness_report assess_liveness(const liveness_facts& facts, boot_clock::time_point now,
                                const liveness_limits& limits) {
  liveness_report report;
  if (facts.loop_last_ran && now > *facts.loop_last_ran) {
    report.since_loop_ran = duration_cast<milliseconds>(now - *facts.loop_last_ran);
  }
  if (!facts.running) {
    report.problem = liveness_problem::not_running;
    report.description = "not ready: the elector is not running";
    return report;
  }
  if (facts.leadership_deadline && now > *facts.leadership_deadline + limits.deadline_grace) {
    const auto late = duration_cast<milliseconds>(now - *facts.leadership_deadline);
    return not_live(std::move(report), liveness_problem::missed_renew_deadline,
                    "the leader is " + ms(late) + " past its renew deadline without stepping down");
  }
  if (report.since_loop_ran > limits.max_loop_stall) {
    return not_live(std::move(report), liveness_problem::loop_stalled,
                    "the loop has not run for " + ms(report.since_loop_ran) + " (limit " +
                        ms(limits.max_loop_stall) + ")");
  }
  if (facts.leadership_deadline && now < *facts.leadership_deadline) {
    report.ready = true;
    report.description = "ok: leader";
  } else if (facts.leadership_deadline) {
    report.problem = liveness_problem::leader_stepping_down;
    report.description = "not ready: the leader reached its renew deadline, stepping down";
  } else if (!facts.cycle_completed || facts.consecutive_failures > 0) {
    report.problem = liveness_problem::follower_unhealthy;
    report.description = facts.cycle_completed
                             ? "not ready: " + std::to_string(facts.consecutive_failures) +
                                   " election cycles failed in a row"
                             : "not ready: no election cycle completed yet";
  } else {
    report.ready = true;
    report.description = "ok: follower";
  }
  return report;
}

}  // namespace s3lect::inline v1::detail
