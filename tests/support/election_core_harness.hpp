// Drives one election_core by hand in unit tests: a fake clock on both time lines, helpers that
// feed storage results, and checks of the invariants every step must keep.
#pragma once

#include "election_core.hpp"

#include <s3lect/config.hpp>
#include <s3lect/error.hpp>
#include <s3lect/record.hpp>

#include <boost/asio/error.hpp>

#include <gtest/gtest.h>

#include <chrono>
#include <optional>
#include <string>
#include <utility>
#include <variant>
#include <vector>

namespace s3lect::test {

using namespace std::chrono_literals;
using detail::core_notice;
using detail::core_role;
using detail::election_core;
using detail::instant;
using detail::leader_changed;
using detail::leadership_gained;
using detail::leadership_lost;
using detail::loss_reason;
using detail::release_finished;
using detail::steady_time;
using detail::step;
using detail::storage_request;
using detail::wall_time;

/// The design's defaults (L 15 s, D 10 s, F 5 s, I 30 s, skew 2 s, no grace) for server `id`.
inline elector_config core_config(const std::string& id) {
  elector_config config;
  config.lock_key = "leader/test.json";
  config.server_id = id;
  config.server_address = id + ".local:8443";
  return config;
}

/// core_config on the economy schedule (reads every F, every I once settled): for the tests
/// that pin the expiry rules and the poll modes read by read, as the Go package polls.
inline elector_config economy_config(const std::string& id) {
  elector_config config = core_config(id);
  config.s3_follower_reads = follower_reads::economy;
  return config;
}

/// 2026-11-21T10:00:00Z: a wall-clock instant with a whole number of milliseconds.
inline wall_time test_wall_epoch() {
  using namespace std::chrono;
  return sys_days{year{2026} / November / 21} + hours{10};
}

/// A record of another writer, encoded as s3lect writes it.
inline std::string foreign_body(const std::string& id, std::uint64_t term, wall_time updated,
                                const std::string& nonce = "f00df00df00df00d",
                                std::optional<std::chrono::milliseconds> lease = 15s) {
  lock_record record;
  record.leader_id = id;
  record.leader_addr = id + ".local:8443";
  record.last_updated = updated;
  record.term = term;
  record.lease = lease;
  record.nonce = nonce;
  return encode_record(record);
}

/// A released record of another writer.
inline std::string released_body(const std::string& id, std::uint64_t term) {
  lock_record record;
  record.leader_id = id;
  record.term = term;
  record.lease = 15s;
  record.released = true;
  record.nonce = "0123456789abcdef";
  return encode_record(record);
}

/// One core with its own fake clocks. Every step it returns is recorded in `last` and checked.
class core_driver {
 public:
  /// `store_authenticated`: as storage::answers_authenticated() would say.
  explicit core_driver(elector_config config, bool store_authenticated = true)
      : core(std::move(config), store_authenticated) {}

  election_core core;
  instant now{steady_time{std::chrono::hours{1000}}, test_wall_epoch()};
  step last;
  std::vector<core_notice> notices;  // every notice so far, in order

  /// Moves both clocks forward by `d`.
  void advance(std::chrono::nanoseconds d) {
    now.steady += d;
    now.wall += std::chrono::duration_cast<wall_time::duration>(d);
  }
  /// Moves both clocks to the steady time `t` (which must not be in the past).
  void advance_to(steady_time t) { advance(t - now.steady); }

  step& start() { return apply(core.start(now)); }
  step& timer() { return apply(core.on_timer(now)); }
  /// Advances to the last step's wake_at and fires the timer.
  step& wake() {
    EXPECT_TRUE(last.wake_at.has_value());
    advance_to(*last.wake_at);
    return timer();
  }
  step& stop() { return apply(core.stop(now)); }
  step& resign(std::chrono::milliseconds hold_off,
               std::optional<std::string> successor = std::nullopt) {
    return apply(core.resign(now, hold_off, std::move(successor)));
  }
  /// The leader's peer endpoint reports these candidates.
  step& candidates(std::vector<detail::candidate> list) {
    return apply(core.on_candidates(now, std::move(list)));
  }
  step& update(elector_config config) { return apply(core.update_config(now, std::move(config))); }

  step& read_absent() { return apply(core.on_read_done(now, {}, get_result{})); }
  step& read(std::string body, std::string etag) {
    get_result result;
    result.found = object{std::move(body), std::move(etag)};
    return apply(core.on_read_done(now, {}, result));
  }
  /// A read whose answer the store dates, as S3 does with whole seconds: the answer's `Date`
  /// is `date` and the object's `Last-Modified` is `last_modified` (both on the store's clock).
  step& read_dated(std::string body, std::string etag, wall_time last_modified, wall_time date) {
    get_result result;
    result.found = object{std::move(body), std::move(etag),
                          std::chrono::floor<std::chrono::seconds>(last_modified)};
    result.info.server_date = std::chrono::floor<std::chrono::seconds>(date);
    return apply(core.on_read_done(now, {}, result));
  }
  /// A read whose answer the store dates `store_age` after the object's Last-Modified.
  step& read_aged(std::string body, std::string etag, std::chrono::seconds store_age) {
    const wall_time date = std::chrono::floor<std::chrono::seconds>(now.wall);
    return read_dated(std::move(body), std::move(etag), date - store_age, date);
  }
  /// A read answered with `result` as given (for fields the helpers above leave unset).
  step& read_result(const get_result& result) { return apply(core.on_read_done(now, {}, result)); }
  step& read_error(boost::system::error_code ec) {
    return apply(core.on_read_done(now, ec, get_result{}));
  }
  step& write_ok(std::string etag) {
    put_result result;
    result.etag = std::move(etag);
    return apply(core.on_write_done(now, {}, result));
  }
  step& write_error(boost::system::error_code ec) {
    return apply(core.on_write_done(now, ec, put_result{}));
  }
  /// A peer answer "leader, with this last successful write" (serial: s3lect's extension;
  /// outcome: the X-S3lect-Watch header).
  /// write_age: the leader's "writeAgeMs".
  step& peer_leader(const std::string& body, std::optional<std::uint64_t> serial = std::nullopt,
                    detail::peer_watch_outcome outcome = detail::peer_watch_outcome::none,
                    std::optional<std::chrono::milliseconds> write_age = std::nullopt) {
    detail::peer_answer answer;
    answer.leader = true;
    answer.write_age = write_age;
    const record_decoding decoded = decode_record(body);
    EXPECT_TRUE(decoded.record.has_value()) << decoded.message;
    answer.record = decoded.record.value_or(lock_record{});
    answer.term = answer.record.term;
    answer.leader_id = answer.record.leader_id;
    answer.serial = serial;
    answer.watch = outcome;
    answer.http_status = 200;
    return apply(core.on_peer_done(now, {}, answer));
  }
  /// A peer answer "not leader" (404).
  step& peer_not_leader(detail::peer_watch_outcome outcome = detail::peer_watch_outcome::none) {
    detail::peer_answer answer;
    answer.http_status = 404;
    answer.watch = outcome;
    return apply(core.on_peer_done(now, {}, answer));
  }
  /// A peer answer "not leader: I released, my released record has this ETag and term".
  step& peer_released(std::string etag, std::uint64_t term,
                      detail::peer_watch_outcome outcome = detail::peer_watch_outcome::changed) {
    detail::peer_answer answer;
    answer.http_status = 404;
    answer.watch = outcome;
    answer.term = term;
    answer.released = detail::peer_answer::released_record{std::move(etag), term, {}, {}};
    return apply(core.on_peer_done(now, {}, answer));
  }
  /// A peer answer "not leader: I released", with the successor and handoverMs it names.
  step& peer_released_to(std::string etag, std::uint64_t term, std::string successor,
                         std::optional<std::chrono::milliseconds> handover) {
    detail::peer_answer answer;
    answer.http_status = 404;
    answer.watch = detail::peer_watch_outcome::changed;
    answer.term = term;
    answer.released =
        detail::peer_answer::released_record{std::move(etag), term, std::move(successor), handover};
    return apply(core.on_peer_done(now, {}, answer));
  }
  step& peer_error(boost::system::error_code ec) {
    return apply(core.on_peer_done(now, ec, detail::peer_answer{}));
  }
  /// True when the last step asks for a peer check.
  bool checking_peer() const {
    return last.operation && last.operation->type == storage_request::kind::peer_check;
  }

  step& aborted_read() { return read_error(boost::asio::error::operation_aborted); }
  step& aborted_write() { return write_error(boost::asio::error::operation_aborted); }

  /// True when the last step asks for a read.
  bool reading() const {
    return last.operation && last.operation->type == storage_request::kind::read;
  }
  /// True when the last step asks for a write.
  bool writing() const {
    return last.operation && last.operation->type == storage_request::kind::write;
  }
  /// The record the last step asks to write.
  lock_record written() const {
    EXPECT_TRUE(writing());
    if (!writing()) return {};
    const record_decoding decoded = decode_record(last.operation->body);
    EXPECT_TRUE(decoded.record.has_value()) << decoded.message;
    return decoded.record.value_or(lock_record{});
  }
  /// The condition of the write the last step asks for.
  put_condition condition() const {
    return writing() ? last.operation->condition : put_condition{};
  }

  /// Notices of type T in the last step.
  template <class T>
  std::vector<T> last_notices() const {
    std::vector<T> found;
    for (const core_notice& n : last.notices) {
      if (const T* t = std::get_if<T>(&n)) found.push_back(*t);
    }
    return found;
  }
  /// Notices of type T so far.
  template <class T>
  std::vector<T> all_notices() const {
    std::vector<T> found;
    for (const core_notice& n : notices) {
      if (const T* t = std::get_if<T>(&n)) found.push_back(*t);
    }
    return found;
  }

  /// Brings a fresh core to leadership on an absent record: returns the ETag it holds.
  std::string become_leader(const std::string& etag = "etag-1") {
    start();
    read_absent();
    write_ok(etag);
    EXPECT_TRUE(core.is_leader());
    return etag;
  }

 private:
  step& apply(step s) {
    // A wake-up at or before "now" would make the layer spin on its timer.
    if (s.wake_at) {
      EXPECT_GT(*s.wake_at, now.steady) << "wake_at not in the future";
    }
    notices.insert(notices.end(), s.notices.begin(), s.notices.end());
    last = std::move(s);
    return last;
  }
};

}  // namespace s3lect::test
