// The sans-I/O core of `s3lect status --watch`: fed each read of the lock record with the time
// it was made, it says when who leads has changed, and prints the change as one line.
#pragma once

#include <s3lect/record.hpp>

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>

namespace s3lect::cli {

/// One read of the lock key.
struct lock_observation {
  bool found = false;  ///< False: there is no record.
  std::string etag;
  /// The record; nullopt for a record that cannot be parsed (when found).
  std::optional<lock_record> record;
  /// The record's age on the store's clock (Date - Last-Modified), when the store tells it.
  std::optional<std::chrono::milliseconds> store_age;
};

/// Who leads, as a watcher sees it.
struct leadership_state {
  /// "leading", "released", "expired" (not renewed for its lease: its holder is gone or cut
  /// off), "none" (no record) or "unreadable" (a record that cannot be parsed).
  std::string state;
  std::string leader_id;
  std::string leader_addr;
  std::uint64_t term = 0;
  /// A released record's successor (`s3lect release --to`, a leader handing over): who should
  /// take over first. Empty when it names none.
  std::string successor;

  friend bool operator==(const leadership_state&, const leadership_state&) = default;
};

/// Tracks the record across reads. A record is judged expired when its ETag has not changed for
/// its lease (leaseMs, or 15 s for a Go writer's record): elapsed on this machine's monotonic
/// clock since the ETag was first seen, plus its age on the store's clock at that first read.
class leadership_watch {
 public:
  /// The new state after a read at `now`, or nullopt when it is the one last reported.
  std::optional<leadership_state> observe(std::chrono::steady_clock::time_point now,
                                          const lock_observation& read);

  /// The state last reported; nullopt before the first read.
  const std::optional<leadership_state>& current() const noexcept { return last_; }

 private:
  leadership_state judge(std::chrono::steady_clock::time_point now,
                         const lock_observation& read) const;

  std::string etag_;
  std::chrono::steady_clock::time_point etag_seen_{};
  std::chrono::milliseconds age_when_seen_{0};
  std::optional<leadership_state> last_;
};

/// Where a watch learned of a change: "s3" (a read of the record) or "peer" (the leader's
/// health endpoint said it no longer leads; the record was then read to say what changed).
enum class change_source { s3, peer };

/// "s3" or "peer".
const char* to_string(change_source source) noexcept;

/// One text line (no newline):
/// `time=… source=s3 state=leading leader=api-7 term=4 addr=10.0.0.5:8443`, and
/// ` successor=api-8` after a released state that names one.
std::string watch_text_line(const leadership_state& state, change_source source,
                            std::chrono::system_clock::time_point now);

/// One JSON object (no newline): {"time":…,"lock":…,"source":…,"state":…,"leaderID":…,
/// "leaderAddr":…,"term":…}, and "successor" after a released state that names one.
std::string watch_json_line(const std::string& lock_url, const leadership_state& state,
                            change_source source, std::chrono::system_clock::time_point now);

}  // namespace s3lect::cli
