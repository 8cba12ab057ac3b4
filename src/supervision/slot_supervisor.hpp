// `s3lect run --slots N`: up to N leaders at once. Each slot is a lock of its own
// (KEY.slot-0 … KEY.slot-N-1) with its own elector and term. A node campaigns for every slot at
// once, leads in the first one it wins and stops campaigning for the others (releasing any it
// won meanwhile), so that it holds at most one; when that leadership ends it campaigns for all
// of them again.
#pragma once

#include "supervision/command_supervisor.hpp"

#include <boost/asio/awaitable.hpp>

#include <memory>
#include <vector>

namespace s3lect::cli {

/// One supervisor per slot, in slot order, each with its slot's elector and `slot` set; the
/// first one's give_up_at and servers count for all.
using slot_supervisors = std::vector<std::unique_ptr<supervisor>>;

/// With --slots, one log output per slot like `node_output` but naming the slot's key
/// (lock=KEY.slot-N), so that each slot's lines are found under the key `status` reads. Empty
/// without --slots.
std::vector<std::unique_ptr<log_output>> slot_log_outputs(const log_output& node_output,
                                                          const run_options& options);

/// Campaigns for the slots and runs the command while leading one, until s3lect must exit;
/// then stops the servers. Returns s3lect's exit code.
boost::asio::awaitable<int> supervise_slots_and_stop(slot_supervisors& slots);

}  // namespace s3lect::cli
