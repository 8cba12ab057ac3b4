// Small pure helpers shared by the files of the election core (election_core*.cpp).
#pragma once

#include "election_core.hpp"

#include <chrono>
#include <string>

namespace s3lect::inline v1::detail::core_helpers {

/// A duration as "<n>ms" for log lines.
inline std::string in_ms(steady_time::duration d) {
  return std::to_string(std::chrono::duration_cast<std::chrono::milliseconds>(d).count()) + "ms";
}

/// What the store said, for last_error: "SignatureDoesNotMatch: its message (HTTP 403, request
/// ID)", each part only when the store sent it (Ceph's radosgw sends no message). Empty when
/// no answer came (a timeout, a refused connection): the error's own message says it all.
inline std::string store_words(const response_info& info) {
  std::string words = info.error_code;
  if (!info.message.empty()) words += (words.empty() ? "" : ": ") + info.message;
  if (info.http_status == 0) return words;
  std::string details = "HTTP " + std::to_string(info.http_status);
  if (!info.request_id.empty()) details += ", request " + info.request_id;
  return words.empty() ? details : words + " (" + details + ")";
}

/// The reason's name in log lines.
inline const char* to_string(loss_reason reason) {
  switch (reason) {
    case loss_reason::renew_deadline:
      return "renew_deadline";
    case loss_reason::clock_refused:
      return "clock_refused";
    case loss_reason::superseded:
      return "superseded";
    case loss_reason::resigned:
      return "resigned";
    case loss_reason::stopped:
      return "stopped";
    case loss_reason::preempted:
      return "preempted";
  }
  return "unknown";
}

/// The same write: every field a writer sets (the nonce alone would do for s3lect's records;
/// the rest covers writers without one).
inline bool same_record(const lock_record& a, const lock_record& b) {
  return a.leader_id == b.leader_id && a.leader_addr == b.leader_addr &&
         a.last_updated == b.last_updated && a.term == b.term && a.lease == b.lease &&
         a.released == b.released && a.nonce == b.nonce;
}

}  // namespace s3lect::inline v1::detail::core_helpers
