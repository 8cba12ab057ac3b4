// Fuzzes the lock record codec: decode_record on arbitrary bytes, and the round trip of whatever
// decodes through encode_record.
//
// Input: the record body, as read from the store. The reader's clock is fixed at
// 2026-01-01T00:00:00Z so that the seeds' verdicts do not drift with the date.
//
// Seeds (corpus/record/): records as s3lect writes them (docs/algorithm.md, tests/unit/
// record_test.cpp: held, released, Go-zero lastUpdated), as the Go package writes them (leaderID,
// leaderAddr and an RFC 3339 lastUpdated only, nanoseconds or a UTC offset, Go's time.Time JSON
// form; Go's zero time for a released lock), and refused ones (term past 2^53, leaseMs 0).
#include <s3lect/error.hpp>
#include <s3lect/record.hpp>

#include "fuzz/fuzz_check.hpp"

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace {

using namespace std::chrono;
using s3lect::lock_record;
using s3lect::record_decoding;

/// What a record becomes once encoded: the timestamp rounded up to the millisecond, a released
/// one stamped with Go's zero time, which reads back as the epoch, and no note of dropped
/// coordination fields (they are not encoded, so nothing is dropped when reading back).
lock_record as_encoded(lock_record record) {
  record.last_updated =
      record.released ? system_clock::time_point{} : ceil<milliseconds>(record.last_updated);
  record.coordination_note.clear();
  return record;
}

/// The documented guarantees of one decoding, whatever the input.
void check_decoding(const record_decoding& decoding, std::size_t body_size) {
  // Messages quote no input: short whatever the body.
  S3LECT_FUZZ_CHECK(decoding.message.size() <= 256);
  if (!decoding.record) {
    S3LECT_FUZZ_CHECK(decoding.error == s3lect::errc::malformed_record);
    S3LECT_FUZZ_CHECK(!decoding.message.empty());
    return;
  }
  S3LECT_FUZZ_CHECK(!decoding.error);
  S3LECT_FUZZ_CHECK(decoding.message.empty());
  S3LECT_FUZZ_CHECK(body_size <= s3lect::max_record_bytes);

  const lock_record& record = *decoding.record;
  S3LECT_FUZZ_CHECK(record.released || !record.leader_id.empty());
  S3LECT_FUZZ_CHECK(record.term <= s3lect::max_record_term);
  if (record.lease) {
    S3LECT_FUZZ_CHECK(*record.lease >= milliseconds{1});
    S3LECT_FUZZ_CHECK(*record.lease <= s3lect::max_record_lease);
  }
  S3LECT_FUZZ_CHECK(record.last_updated >= system_clock::time_point{});
  S3LECT_FUZZ_CHECK(record.last_updated < s3lect::max_record_time);
  // Every string came out of the body, unescaped: never longer than it.
  S3LECT_FUZZ_CHECK(record.leader_id.size() + record.leader_addr.size() + record.nonce.size() <=
                    body_size);
  S3LECT_FUZZ_CHECK(s3lect::fuzz::is_valid_utf8(record.leader_id));
  S3LECT_FUZZ_CHECK(s3lect::fuzz::is_valid_utf8(record.leader_addr));
  S3LECT_FUZZ_CHECK(s3lect::fuzz::is_valid_utf8(record.nonce));
  // Coordination fields are dropped, never fatal, and kept within their limits.
  if (record.priority) {
    S3LECT_FUZZ_CHECK(*record.priority >= -s3lect::max_record_priority);
    S3LECT_FUZZ_CHECK(*record.priority <= s3lect::max_record_priority);
  }
  S3LECT_FUZZ_CHECK(record.candidates.size() <= s3lect::max_record_candidates);
  for (const auto& candidate : record.candidates) S3LECT_FUZZ_CHECK(!candidate.id.empty());
  if (record.handover) {
    S3LECT_FUZZ_CHECK(*record.handover >= milliseconds{1});
    S3LECT_FUZZ_CHECK(*record.handover <= s3lect::max_record_lease);
  }
  S3LECT_FUZZ_CHECK(record.coordination_note.size() <= 256);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view body(reinterpret_cast<const char*>(data), size);
  const record_decoding decoding = s3lect::decode_record(body);
  check_decoding(decoding, body.size());
  if (!decoding.record) return 0;

  // Whatever decodes must encode, and read back as the same record (up to the encoding's
  // millisecond rounding); encoding that again must give the same bytes.
  const std::string encoded = s3lect::encode_record(*decoding.record);
  // JSON escaping at most sextuples a string ("\u001f"); the rest is field names and numbers.
  S3LECT_FUZZ_CHECK(encoded.size() <= 6 * body.size() + 256);
  if (encoded.size() > s3lect::max_record_bytes) {
    // Only a body close to the limit with few fields gets here (encoding adds the missing ones
    // and the milliseconds); no writer of ours comes near, as record.hpp says.
    S3LECT_FUZZ_CHECK(body.size() + 256 > s3lect::max_record_bytes);
    return 0;
  }
  const record_decoding again = s3lect::decode_record(encoded);
  if (!again.record) {
    std::fprintf(stderr, "re-encoded record refused: %s\n%s\n", again.message.c_str(),
                 encoded.c_str());
  }
  S3LECT_FUZZ_CHECK(again.record.has_value());
  check_decoding(again, encoded.size());
  S3LECT_FUZZ_CHECK(*again.record == as_encoded(*decoding.record));
  S3LECT_FUZZ_CHECK(s3lect::encode_record(*again.record) == encoded);
  return 0;
}
