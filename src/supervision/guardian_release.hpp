// `s3lect __guardian-release`: not a user command. A job's guardian runs it (by exec, from the
// very binary s3lect ran from) once s3lect has died and every process of the job is gone, to
// release the lock on s3lect's behalf so that a follower takes over at once instead of waiting
// for the lease to run out (docs/safety-and-fencing.md#release-by-the-guardian).
#pragma once

#include <string>
#include <vector>

namespace s3lect::cli {

/// Runs it with the arguments after the subcommand:
///   --term T --nonce N --processes K --kill-ms M --holder ID [--slot S] -- ARGUMENTS OF `run`
/// It releases the record only if it is still exactly the one s3lect last told its guardian
/// of (term T, nonce N, held by ID, s3lect's id, not released), with If-Match on the ETag it
/// read. Returns 0 when released, 8 when the record had changed (nothing written), 4 when the
/// store failed, 2 on bad arguments.
int run_guardian_release(const std::vector<std::string>& args);

}  // namespace s3lect::cli
