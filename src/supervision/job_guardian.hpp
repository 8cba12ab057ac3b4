// Running the command of `s3lect run` under its guardian (guardian/guardian.hpp): starting it,
// telling the guardian how long the leadership is confirmed, waiting for the job's end, and
// what to do when the guardian itself is gone.
#pragma once

#include "supervision/command_supervisor.hpp"

#include <boost/asio/awaitable.hpp>
#include <boost/system/error_code.hpp>

#include <cstdint>
#include <optional>
#include <string>

namespace s3lect::cli {

/// The leadership of `election` with `term` as its guardian must know it: confirmed until a
/// moment no later than the elector's own demotion deadline, by the write with the nonce it
/// names. nullopt when the elector does not lead with `term` (any more).
std::optional<guardian::lead_until> confirmed_leadership(const elector& election,
                                                         std::uint64_t term);

/// Starts the command for `lease` under a new guardian, only if the elector still leads with its
/// term: else errc::not_leader. Sets s.job and s.started and returns success once the guardian
/// says the command runs; else the error (the errno of the step that failed, named in `step`:
/// "exec" for the command itself).
boost::asio::awaitable<boost::system::error_code> start_job(supervisor& s, leadership_lease lease,
                                                            std::string& step);

/// Tells the guardian of every renewal of `lease` (a later "leading until"), and returns once
/// `lease` is lost.
boost::asio::awaitable<void> confirm_until_lost(supervisor& s, leadership_lease lease);

/// How a job ended.
struct job_end {
  int status = 1;  ///< The command's shell status (128 + N if killed by signal N).
  guardian::end_cause cause = guardian::end_cause::killed;
  unsigned leftovers = 0;  ///< Processes still running when the command exited, killed then.
  /// The guardian died before it could tell (the status is then unknown).
  bool guardian_lost = false;
  /// Every process of the job is known to be gone. False only when the guardian died and no PID
  /// namespace or cgroup of the job's own shows that nothing of it is left.
  bool tree_gone = true;
};

/// The end `message` reports; nullopt for any other message.
std::optional<job_end> end_reported(const std::optional<guardian::from_guardian>& message);

/// The guardian is gone without reporting the job's end: reaps it, empties the job's cgroup
/// when it had one, and logs what is known. Ends s.job.
boost::asio::awaitable<job_end> guardian_lost(supervisor& s);

/// Stops the job: SIGTERM to its whole tree and SIGKILL after --kill-grace (at once on a second
/// stop signal), other signals passed on meanwhile, and logs how it went. Returns its end once
/// every process of the tree is gone. The guardian is kept until retire_guardian.
boost::asio::awaitable<job_end> stop_job(supervisor& s, std::string reason);

/// Tells the job's guardian that s3lect is done with it (nothing is to be released on its
/// behalf any more) and reaps it. The job must be over.
boost::asio::awaitable<void> retire_guardian(supervisor& s);

}  // namespace s3lect::cli
