// Whether an elector is stuck, for a liveness probe (Kubernetes' livenessProbe restarts a wedged
// process) and a readiness probe: elector::liveness() answers it, and metrics_server serves it as
// /healthz and /readyz. Use it when you serve your own endpoints.
#pragma once

#include <s3lect/detail/abi.hpp>

#include <chrono>
#include <string>

namespace s3lect::inline v1 {

/// When elector::liveness() calls an elector stuck.
struct liveness_limits {
  /// The elector's loop has not run for this long. Zero: 2 × (I + W) of the elector's
  /// configuration (I = infrequent_interval, W = retry.worst_case(request_timeout)), the longest
  /// a healthy loop waits between two runs, doubled: a stable follower waits I, then a read
  /// takes up to W.
  std::chrono::milliseconds max_loop_stall{0};
  /// A leader that still counts itself leader this long after its renew deadline: its loop,
  /// which demotes it at the deadline, did not. Covers the loop's scheduling delay.
  std::chrono::milliseconds deadline_grace{std::chrono::seconds{1}};
};

/// Why an elector is not live, or not ready.
enum class liveness_problem {
  none,
  /// Not live: a leader is past its renew deadline plus deadline_grace without stepping down.
  missed_renew_deadline,
  /// Not live: the loop has not run for max_loop_stall.
  loop_stalled,
  /// Live, not ready: the elector is not running (not started, or stopped).
  not_running,
  /// Live, not ready: a leader at its renew deadline, which its loop is about to act on.
  leader_stepping_down,
  /// Live, not ready: a follower whose last election cycle failed (the store, or in peer mode
  /// the leader, did not answer), or that has not completed one yet.
  follower_unhealthy,
};

/// An elector's liveness and readiness at one moment (elector::liveness()).
struct liveness_report {
  /// False when the elector is stuck: /healthz answers 503, and a probe should restart it.
  bool live = true;
  /// Leader, or a running follower whose last election cycle succeeded: /readyz answers 200.
  bool ready = false;
  /// Why not live, else why not ready; none when both hold.
  liveness_problem problem = liveness_problem::none;
  /// Since the loop last ran (handled an event or its timer); zero before it first ran.
  std::chrono::milliseconds since_loop_ran{0};
  /// One line for a probe's answer and a log, e.g. "ok: leader" or "stuck: the loop has not
  /// run for 65000 ms (limit 64000 ms)".
  std::string description;
};

}  // namespace s3lect::inline v1
