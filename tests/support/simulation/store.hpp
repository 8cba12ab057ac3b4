// The store of the election simulation: one key, conditional writes, unique ETags, and the
// store's own clock. Several front ends answer requests, each with a clock off the store's true
// time by a constant (their spread at most max_clock_skew); the one that handles a PUT stamps
// Last-Modified, the one that handles a GET stamps Date, both in whole seconds (truncated,
// rounded to nearest or rounded up); in some runs one front end omits them on what it serves,
// or the whole store does. It also tells the checks how each change of holder came about:
// which record a successful conditional PUT replaced.
// Included by election_core_simulation_test.cpp only.
#pragma once

#include "support/election_core_harness.hpp"

#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace s3lect::test::simulation {

using std::chrono::nanoseconds;

/// A process: a node and the incarnation of its core (a restart is a new process).
struct process_id {
  std::size_t node = 0;
  int incarnation = 0;
  friend bool operator==(const process_id&, const process_id&) = default;
};

/// How a front end turns its clock into a header's whole seconds.
enum class rounding { truncate, nearest, up };

struct front_end {
  nanoseconds offset{0};  ///< Its clock is the store's true clock plus this.
  rounding mode = rounding::truncate;
  bool dates = true;  ///< Sends Date on what it reads, Last-Modified on what it writes.
};

/// How a write that made a new holder got the lock, judged by the record it replaced.
enum class acquisition_kind {
  absent,      ///< If-None-Match on a missing object.
  released,    ///< Replaced a released record.
  expired,     ///< Replaced a held record of another process: the expiry rule allowed it.
  own_record,  ///< Replaced a held record of the same process (re-taken after a demotion).
};

inline const char* to_string(acquisition_kind kind) {
  switch (kind) {
    case acquisition_kind::absent:
      return "absent";
    case acquisition_kind::released:
      return "released";
    case acquisition_kind::expired:
      return "expired";
    case acquisition_kind::own_record:
      return "own_record";
  }
  return "?";
}

/// A successful write that gave the lock a new holder and term.
struct acquisition {
  acquisition_kind kind = acquisition_kind::absent;
  process_id writer;
  nanoseconds committed{0};
  nanoseconds replaced_committed{0};  ///< When the replaced record was written (not absent).
  std::optional<process_id> replaced_writer;
  std::optional<std::chrono::milliseconds> replaced_lease;  ///< The replaced record's leaseMs.
};

/// One version of the lock object.
struct stored_version {
  object value;  // last_modified set when the store dates its objects
  lock_record record;
  process_id writer;
  nanoseconds committed{0};
};

class sim_store {
 public:
  /// `dated`: send Date and Last-Modified. `base`: the store's clock less real time. `report`
  /// hears of every broken invariant.
  sim_store(bool dated, nanoseconds base, std::vector<front_end> front_ends,
            std::function<void(std::string)> report)
      : dated_(dated),
        base_(base),
        front_ends_(std::move(front_ends)),
        report_(std::move(report)) {}

  /// A GET that the front end `fe` serves now, dating its answer at real time `date_at` (now
  /// or later: the store writes the Date header when it answers).
  get_result read(std::size_t fe, nanoseconds date_at) const {
    get_result result;
    if (current_) result.found = current_->value;
    if (dated_ && front_ends_[fe].dates) result.info.server_date = header(fe, date_at);
    return result;
  }

  /// A conditional PUT that the front end `fe` applies atomically at real time `now`: the new
  /// ETag, or nullopt when the condition does not hold (412). Checks that terms never go back
  /// and that every change of holder brings a new term, and records acquisitions.
  std::optional<std::string> write(const std::string& body, const put_condition& condition,
                                   process_id writer, std::size_t fe, nanoseconds now) {
    const bool holds = condition.type == put_condition::kind::if_absent
                           ? !current_
                           : current_ && current_->value.etag == condition.etag;
    if (!holds) return std::nullopt;
    // The store reads no dates: decoded with a clock far ahead, so that a writer's wrong wall
    // clock does not make its record unreadable here.
    const record_decoding decoded = decode_record(body);
    if (!decoded.record) {
      report_("a writer stored an unreadable record: " + decoded.message);
      return std::nullopt;
    }
    const lock_record& record = *decoded.record;
    if (record.term < max_term_) {
      report_("store term went back from " + std::to_string(max_term_) + " to " +
              std::to_string(record.term));
    }
    if (record.released) {
      if (!current_ || !(current_->writer == writer) || current_->record.term != record.term) {
        report_("a released record written by a process that did not hold term " +
                std::to_string(record.term));
      }
    } else if (!current_ || current_->record.released || !(current_->writer == writer) ||
               current_->record.term != record.term) {
      // Not a renewal: a new holder, or the same process again after a demotion.
      if (record.term <= max_term_) {
        report_("a change of holder without a new term (term " + std::to_string(record.term) + ")");
      }
      acquisition taken;
      taken.writer = writer;
      taken.committed = now;
      if (!current_) {
        taken.kind = acquisition_kind::absent;
      } else {
        taken.replaced_committed = current_->committed;
        taken.replaced_writer = current_->writer;
        taken.replaced_lease = current_->record.lease;
        taken.kind = current_->record.released    ? acquisition_kind::released
                     : current_->writer == writer ? acquisition_kind::own_record
                                                  : acquisition_kind::expired;
      }
      if (!acquisitions_.emplace(record.term, taken).second) {
        report_("term " + std::to_string(record.term) + " acquired twice");
      }
    }
    max_term_ = std::max(max_term_, record.term);
    stored_version next;
    next.value.body = body;
    next.value.etag = "v" + std::to_string(++versions_);
    if (dated_ && front_ends_[fe].dates) next.value.last_modified = header(fe, now);
    next.record = record;
    next.writer = writer;
    next.committed = now;
    current_ = std::move(next);
    return current_->value.etag;
  }

  const std::optional<stored_version>& current() const { return current_; }
  const acquisition* acquisition_of(std::uint64_t term) const {
    const auto it = acquisitions_.find(term);
    return it == acquisitions_.end() ? nullptr : &it->second;
  }
  bool dated() const { return dated_; }
  std::size_t front_ends() const { return front_ends_.size(); }
  /// The store's true clock at real time `now`.
  wall_time true_clock(nanoseconds now) const {
    return test_wall_epoch() + std::chrono::duration_cast<wall_time::duration>(base_ + now);
  }

 private:
  // A Date or Last-Modified header of front end `fe` at real time `now`.
  wall_time header(std::size_t fe, nanoseconds now) const {
    const front_end& end = front_ends_[fe];
    const wall_time clock = true_clock(now + end.offset);
    switch (end.mode) {
      case rounding::truncate:
        return std::chrono::floor<std::chrono::seconds>(clock);
      case rounding::nearest:
        return std::chrono::round<std::chrono::seconds>(clock);
      case rounding::up:
        return std::chrono::ceil<std::chrono::seconds>(clock);
    }
    return clock;
  }

  bool dated_;
  nanoseconds base_;
  std::vector<front_end> front_ends_;
  std::optional<stored_version> current_;
  std::uint64_t versions_ = 0;
  std::uint64_t max_term_ = 0;
  std::map<std::uint64_t, acquisition> acquisitions_;
  std::function<void(std::string)> report_;
};

}  // namespace s3lect::test::simulation
