// Fuzzes the follower's reading of a peer's health answer, parse_peer_response, and the round
// trip from what a leader's endpoint writes (leader_body, follower_body) to what a follower reads.
//
// Input, one field per line (the last one runs to the end and may hold newlines):
//   1. the HTTP status and, optionally, the body limit     200 65536
//   2. the X-S3lect-Watch header                           changed
//   3. the body                                            {"leaderID":"api-7",...}
// The reader's clock is fixed at 2026-01-01T00:00:00Z.
//
// Seeds (corpus/peer_response/): a leader's 200 as s3lect writes it (the record as in
// docs/algorithm.md plus "term", "leaseRemainingMs" and "serial"; health_protocol.cpp), a
// follower's 404 ({"leader":false,"leaderID":...,"term":N}), a Go leader's 200 (its record
// only: leaderID, leaderAddr, lastUpdated) and Go's plain-text 404, a stopping server's 503
// {"error":"stopped"}, a 429, and watch outcomes changed, timeout, refused, stopping.
#include <s3lect/error.hpp>
#include <s3lect/health.hpp>
#include <s3lect/record.hpp>

#include "health_protocol.hpp"
#include "peer_response.hpp"

#include "fuzz/fuzz_check.hpp"
#include "fuzz/fuzz_input.hpp"

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace {

using namespace std::chrono;
using namespace s3lect;
using namespace s3lect::detail;
using fuzz::next_field;
using fuzz::next_number;

constexpr std::size_t default_body_limit = 64 * 1024;

bool is_printable_ascii(std::string_view text) {
  for (const char c : text) {
    if (c < ' ' || c > '~') return false;
  }
  return true;
}

lock_record as_encoded(lock_record record) {
  record.last_updated =
      record.released ? system_clock::time_point{} : ceil<milliseconds>(record.last_updated);
  // The note of dropped coordination fields is not encoded: nothing is dropped reading it back.
  record.coordination_note.clear();
  return record;
}

/// The documented outcome of one answer, whatever the input.
void check_parsing(const peer_parsing& parsing, unsigned status, std::string_view watch_header,
                   std::string_view body, std::size_t body_limit) {
  const peer_answer& answer = parsing.answer;
  S3LECT_FUZZ_CHECK(answer.http_status == status);
  // A log line: bounded, and no control characters or raw bytes of the peer's.
  S3LECT_FUZZ_CHECK(answer.message.size() <= 600);
  S3LECT_FUZZ_CHECK(is_printable_ascii(answer.message));
  if (body.size() > body_limit) {
    S3LECT_FUZZ_CHECK(parsing.error == errc::body_too_large);
    return;
  }
  if (parsing.error) {
    S3LECT_FUZZ_CHECK(!answer.message.empty());
    S3LECT_FUZZ_CHECK(!answer.leader);
    if (status == 429) {
      S3LECT_FUZZ_CHECK(parsing.error == errc::throttled);
    } else if (status >= 500 && status < 600) {
      S3LECT_FUZZ_CHECK(parsing.error == errc::server_error);
    } else if (status >= 400 && status < 500) {
      S3LECT_FUZZ_CHECK(status != 404 && parsing.error == errc::bad_request);
    } else {
      S3LECT_FUZZ_CHECK(parsing.error == errc::protocol_error);
    }
    return;
  }
  S3LECT_FUZZ_CHECK(status == 200 || status == 404);
  S3LECT_FUZZ_CHECK(answer.message.empty());
  S3LECT_FUZZ_CHECK(answer.watch == parse_watch_outcome(watch_header));
  S3LECT_FUZZ_CHECK(parse_watch_outcome(to_string(answer.watch)) == answer.watch);
  if (status == 404) {
    S3LECT_FUZZ_CHECK(!answer.leader);
    S3LECT_FUZZ_CHECK(answer.term <= max_record_term);
    S3LECT_FUZZ_CHECK(answer.leader_id.size() <= body.size());
    return;
  }
  S3LECT_FUZZ_CHECK(answer.leader);
  const record_decoding decoding = decode_record(body);
  S3LECT_FUZZ_CHECK(decoding.record && *decoding.record == answer.record);
  S3LECT_FUZZ_CHECK(answer.term == answer.record.term);
  S3LECT_FUZZ_CHECK(answer.leader_id == answer.record.leader_id);
  if (answer.lease_remaining) {
    S3LECT_FUZZ_CHECK(*answer.lease_remaining >= milliseconds::zero());
    S3LECT_FUZZ_CHECK(*answer.lease_remaining <= max_lease_remaining);
  }
}

/// A leader whose last write is `record`, answering as health_protocol.cpp does, is read back by
/// a follower as that record; so is a follower's 404.
void check_endpoint_round_trip(const lock_record& record, milliseconds lease_remaining) {
  leadership_snapshot snapshot;
  snapshot.is_leader = true;
  snapshot.term = record.term;
  snapshot.record_json = encode_record(record);
  snapshot.lease_remaining = lease_remaining;
  snapshot.leader_id = record.leader_id;
  snapshot.serial = record.term * 3 + 1;
  const std::string body = leader_body(snapshot);
  if (body.size() > default_body_limit) return;
  const peer_parsing leader = parse_peer_response(200, "timeout", body, default_body_limit);
  if (leader.error) std::fprintf(stderr, "%s\n%s\n", leader.answer.message.c_str(), body.c_str());
  S3LECT_FUZZ_CHECK(!leader.error);
  S3LECT_FUZZ_CHECK(leader.answer.leader);
  S3LECT_FUZZ_CHECK(leader.answer.record == as_encoded(record));
  S3LECT_FUZZ_CHECK(leader.answer.term == record.term);
  S3LECT_FUZZ_CHECK(leader.answer.lease_remaining == std::max(lease_remaining, milliseconds{0}));
  S3LECT_FUZZ_CHECK(leader.answer.watch == peer_watch_outcome::timeout);

  leadership_snapshot follower;
  follower.term = record.term;
  follower.leader_id = record.leader_id;
  const peer_parsing read =
      parse_peer_response(404, "changed", follower_body(follower), default_body_limit);
  S3LECT_FUZZ_CHECK(!read.error && !read.answer.leader);
  S3LECT_FUZZ_CHECK(read.answer.leader_id == record.leader_id);
  S3LECT_FUZZ_CHECK(read.answer.term == record.term);
  S3LECT_FUZZ_CHECK(read.answer.watch == peer_watch_outcome::changed);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::string_view input(reinterpret_cast<const char*>(data), size);
  std::string_view status_line = next_field(input);
  const std::string_view watch_header = next_field(input);
  const std::string_view body = next_field(input, true);
  const unsigned status = next_number<unsigned>(status_line, 200);
  const std::size_t body_limit = next_number<std::size_t>(status_line, default_body_limit);

  const peer_parsing parsing = parse_peer_response(status, watch_header, body, body_limit);
  check_parsing(parsing, status, watch_header, body, body_limit);

  // Any record that decodes, served by a leader with a lease the input picks.
  const record_decoding decoding = decode_record(body);
  if (decoding.record) {
    const auto lease_remaining =
        milliseconds{static_cast<std::int64_t>(status) % (max_lease_remaining.count() + 2) - 1};
    check_endpoint_round_trip(*decoding.record, lease_remaining);
  }
  return 0;
}
