// `s3lect status --watch` following the leader's peer endpoint instead of polling S3: while the
// record names a leader whose endpoint can be trusted (its peerKeyPin, or --peer-ca), one watch
// is held open on that endpoint and S3 is read again only when the leader says it no longer
// leads, or when the endpoint fails (then the watch falls back to S3 polling).
#pragma once

#include "cli/signal_inbox.hpp"

#include <s3lect/leader_endpoint.hpp>
#include <s3lect/record.hpp>

#include <boost/asio/awaitable.hpp>
#include <boost/asio/signal_set.hpp>

#include <string>

namespace s3lect::cli {

/// How following the leader's endpoint ended.
enum class follow_end {
  changed,  ///< The leader said it no longer leads with its term: read S3 now.
  failed,   ///< The endpoint could not be reached, verified or did not hold the watch.
  stopped,  ///< SIGINT or SIGTERM arrived.
};

/// Whether a record's leader can be followed: it leads (not released), names an address, and
/// its certificate can be verified, by the record's pin or (when `have_ca`) by --peer-ca.
bool can_follow(const lock_record& record, bool have_ca);

/// Holds watches on `record`'s leader until one of the ends above; on `failed`, `problem` says
/// why, for the user.
boost::asio::awaitable<follow_end> follow_leader(leader_endpoint_client& client,
                                                 const lock_record& record, signal_inbox& signals,
                                                 std::string& problem);

}  // namespace s3lect::cli
