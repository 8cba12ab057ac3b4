// The election state machine of docs/algorithm.md without I/O: fed "now" and events, it answers
// with the actions to perform. The coroutine layer (elector) performs them: one storage operation
// at a time under the retry policy, one timer, and the notifications to waiters and hooks.
//
// Choices made where the design is silent (S = send time of the last successful renewal):
// - S is when the core *issued* the write, which is no later than when the attempt that landed
//   was sent: the deadline S + D errs early, never late.
// - Rule (b) counts from the *completion* of the first read that returned an ETag: the write
//   that produced it was sent before that moment, whatever the read's latency.
// - At the expiry moment the follower writes (If-Match on the ETag it saw) without reading
//   first: the condition makes a stale view harmless, and it saves a GET and a round trip.
//   Only in frequent mode: a stable follower trusts a healthy leader until its next read at I.
// - "Healthy" (for stable mode) means the leader was seen renewing: two consecutive reads with
//   the same leader and term and different ETags. The same ETag twice, a new leader or term, an
//   expired, released, absent or unreadable record, or a failed read mean frequent mode.
// - The writer's leaseMs counts when longer than our lease, for rules (b) and (c): a writer
//   configured with a longer lease (and renew deadline) stays safe from us.
// - A write in doubt (any error but 412) is resolved by a re-read that looks for our nonce; the
//   core remembers its last 16 writes. A renewal found not to have landed (our previous record
//   unchanged) is retried after a pause of min(F, max(100 ms, longest retry delay)) while
//   before S + D; an acquisition likewise, keeping the ETag's first sight.
// - After a demotion (or a stop, or a release), every record of ours is "ours, but nobody leads
//   under it": it may be taken over at once, with a new term and no acquire grace.
// - Acquire grace applies after taking over an expired record (held or unreadable), and runs
//   from the moment the acquisition is known to have landed.
// - stop() and resign() report the loss at once, before the released record is written, so
//   leader work ends before anyone may take over. Reads in flight are cancelled; writes are
//   awaited (a write in doubt gets one re-read, so that a won lock is released, not left to
//   expire).
// - Coordination (election_core_coordination.cpp) only ever delays a takeover: a released
//   record's hold-off counts from our first sight of its ETag, and a held record's rank delay is
//   added to its expiry moment (rules (b) and (c)), not to its first sight.
// - A peer check or watch that fails because the leader's endpoint went away (connection refused
//   or closed, after the endpoint had answered for this leader and term) is read as "its process
//   may be dead, and its guardian about to release the lock": the store is re-read at once, then
//   50, 100, 200 ms ... later (doubling) until the gap reaches F or the record changes. A timeout
//   (a frozen leader, or a network problem) gets the one read of any other failure.
#pragma once

#include <s3lect/config.hpp>
#include <s3lect/elector.hpp>
#include <s3lect/record.hpp>
#include <s3lect/storage.hpp>

#include "boot_clock.hpp"
#include "candidate.hpp"
#include "peer_response.hpp"
#include "preemption.hpp"

#include <boost/system/error_code.hpp>

#include <chrono>
#include <cstdint>
#include <deque>
#include <optional>
#include <string>
#include <variant>
#include <vector>

namespace s3lect::inline v1::detail {

/// Monotonic time that counts a suspend (boot_clock): every interval and deadline.
using steady_time = boot_clock::time_point;
using wall_time = std::chrono::system_clock::time_point;

/// "Now" on both time lines, read together by the caller just before it calls the core.
/// `steady` measures every interval and deadline. `wall` is the best estimate of the store's
/// clock (the local wall clock corrected by the measured offset): it only stamps lastUpdated
/// and the status; no decision depends on it.
struct instant {
  steady_time steady;
  wall_time wall;
};

/// Where the core stands in the election.
enum class core_role {
  follower,   ///< Not holding the lock: reading it, or waiting to.
  candidate,  ///< An acquisition write is in flight, or its outcome is being resolved.
  holding,    ///< Holds and renews the lock but has not reported it yet (acquire grace).
  leader,     ///< Holds the lock and has reported leadership.
  stopping,   ///< stop() was called: finishing the operation in flight and the release.
  stopped,    ///< Done; start() may begin again.
};

/// Why a reported leadership ended.
enum class loss_reason {
  renew_deadline,  ///< No renewal succeeded by S + D: self-demotion.
  clock_refused,   ///< The store refused our requests as signed too far from its clock.
  superseded,      ///< 412 on renewal, or the record turned out to be someone else's.
  resigned,        ///< resign() was called.
  stopped,         ///< stop() was called.
  preempted,       ///< Handed over to a higher-priority candidate (preemption::automatic).
};

/// A peer-mode health check of the leader's endpoint (docs/peer-mode.md#how-it-works).
struct peer_check_request {
  std::string address;  ///< The leader's leaderAddr.
  std::string key_pin;  ///< The leader's peerKeyPin: trust its certificate by this pin.
  /// Set: a watch of this duration on `term` (and `serial`, when set). Unset: a plain check.
  std::optional<std::chrono::milliseconds> watch;
  std::uint64_t term = 0;
  std::optional<std::uint64_t> serial;
};

/// An operation for the caller to start: on the lock key under the retry policy, reported with
/// on_read_done / on_write_done, or a peer check, reported with on_peer_done.
struct storage_request {
  enum class kind { read, write, peer_check };
  kind type = kind::read;
  std::string body;         ///< write: the encoded record, with a fresh nonce.
  put_condition condition;  ///< write: if_absent, or if_match on the ETag it replaces.
  peer_check_request peer;  ///< peer_check: whom to ask, and how.
};

/// This elector now leads with fencing token `term`.
struct leadership_gained {
  std::uint64_t term = 0;
};
/// This elector no longer leads; stop leader work now.
struct leadership_lost {
  std::uint64_t term = 0;
  loss_reason reason = loss_reason::superseded;
};
/// The holder named by the lock record changed; an empty id means nobody (absent, released or
/// unreadable record). Also emitted when this elector acquires the lock.
struct leader_changed {
  std::string leader_id;
  std::string leader_addr;
  std::uint64_t term = 0;
  friend bool operator==(const leader_changed&, const leader_changed&) = default;
};
/// A release asked for by stop() or resign() is over: `released` tells whether a released
/// record was written (false: nothing was held, or the write failed).
struct release_finished {
  bool released = false;
  /// When released: the released record's ETag and term, which a leader tells its watching
  /// followers so that they can take over with If-Match without reading first.
  std::string etag;
  std::uint64_t term = 0;
  /// When released: the successor the record names (empty: none) and its handoverMs, which a
  /// leader's 404 answer also tells, so that a watch hint orders the takeover like a read.
  std::string successor;
  std::optional<std::chrono::milliseconds> handover;
};
/// The core stopped; it emits nothing more until start().
struct core_stopped {};
/// With preemption::advise: leadership `term` should be handed over to `successor`, a verified
/// candidate of higher priority that has settled (docs/coordination.md#preemption). Emitted once
/// per term and successor.
struct handover_advised {
  std::uint64_t term = 0;
  std::string successor;
};

/// Something to tell the elector's users, in the order it happened.
using core_notice = std::variant<leadership_gained, leadership_lost, leader_changed,
                                 release_finished, core_stopped, handover_advised>;

/// What the caller must do after an event, in this order: cancel the operation in flight (its
/// completion must still be reported), publish the notices, start `operation`, and re-arm the
/// single timer to `wake_at` (or disarm it when nullopt) to call on_timer() then.
struct step {
  bool cancel_operation = false;
  std::vector<core_notice> notices;
  std::optional<storage_request> operation;
  std::optional<steady_time> wake_at;
};

/// A snapshot for status().
struct core_status {
  core_role role = core_role::follower;
  std::string leader_id;  ///< Holder named by the last record read or written; empty: none.
  std::string leader_addr;
  std::uint64_t term = 0;  ///< Term of the last record read or written.
  std::string etag;        ///< ETag of the last record read or written.
  poll_mode mode = poll_mode::frequent;
  /// Steady and wall time at which the last successful write of ours was sent.
  std::optional<steady_time> last_renewal;
  std::optional<wall_time> last_renewal_wall;
  /// Wall time at which the leader's record was last seen to change, or renewed by us.
  std::optional<wall_time> leader_last_seen;
  /// Wall time at which the last storage operation completed.
  std::optional<wall_time> last_election_time;
  unsigned consecutive_failures = 0;  ///< Failed storage operations since the last success.
  boost::system::error_code last_error_code;
  std::string last_error;  ///< The last storage or record error; kept after recovery.
};

/// A store answer that no retry changes without an operator: refused credentials or signature,
/// access denied, a missing bucket, and the other 4xx and 3xx answers (a wrong region is a 301
/// or a 400). Not a lost race (412, 409), a wrong clock (which the elector corrects), a garbled
/// record (its writer may fix it) or a transient failure.
bool is_refusal(const boost::system::error_code& ec) noexcept;

/// How many refused reads in a row, or refused writes in a row, mean the store will not serve
/// this elector: one is not enough (a credential being rotated can be refused once), three take
/// a few seconds at the default intervals.
inline constexpr unsigned refusals_before_giving_up = 3;

/// The election state machine. Not thread-safe: the elector calls it from its strand.
///
/// Protocol: call start(), then perform each step. Report the completion of every operation
/// the core started (also a cancelled one: usually with asio::error::operation_aborted), call
/// on_timer() when the timer armed from the latest step expires (early or spurious calls are
/// harmless), and stop() / resign() / update_config() when asked. The core never starts a
/// second operation before the first one's completion is reported.
class election_core {
 public:
  /// Takes a configuration the caller has validated, and whether the store's answers are
  /// authenticated (storage::answers_authenticated()): if not, the leader's key pin in the
  /// records read is used only with peer.trust_unauthenticated_store.
  election_core(elector_config config, bool store_authenticated);

  /// Begins (or, after core_stopped, begins again): the first step reads the lock.
  step start(const instant& now);
  /// Reports the completion of a read: `result.found` is nullopt for a missing object.
  step on_read_done(const instant& now, const boost::system::error_code& ec,
                    const get_result& result);
  /// Reports the completion of a write: the new ETag in `result.etag` on success.
  step on_write_done(const instant& now, const boost::system::error_code& ec,
                     const put_result& result);
  /// Reports the completion of a peer check (a 404 is success with answer.leader == false).
  step on_peer_done(const instant& now, const boost::system::error_code& ec,
                    const peer_answer& answer);
  /// Reports that the time of the last step's wake_at has come.
  step on_timer(const instant& now);
  /// Stops: reports leadership lost at once, writes a released record if holding the lock, then
  /// emits core_stopped. A read in flight is cancelled; a write is waited for.
  step stop(const instant& now);
  /// Gives up leadership (reported lost at once, released record written) and keeps following,
  /// without trying to acquire before now + hold_off. Ends with release_finished. The released
  /// record names `successor` (unset, empty or our own id: the best candidate) to go first.
  step resign(const instant& now, std::chrono::milliseconds hold_off,
              std::optional<std::string> successor = std::nullopt);
  /// Applies a new configuration that validate_update() accepted; takes effect at once.
  step update_config(const instant& now, elector_config config);
  /// Replaces the candidates the leader's peer endpoint knows (empty while not leading).
  step on_candidates(const instant& now, std::vector<candidate> list);
  /// Asks for requests sent at `at` + n seconds (whole n), where the store's Date is expected to
  /// tick over while it handles them, so that their answers measure the store's clock finely
  /// (clock_offset_estimator::next_probe_time); nullopt: no such wish. A renewal or a read due
  /// within a quarter of its interval (at most 1 s) after such a moment is sent then instead.
  /// Takes effect from the next step.
  void set_clock_probe(std::optional<steady_time> at);

  /// The configuration in force.
  const elector_config& config() const noexcept { return config_; }
  /// Where the core stands.
  core_role role() const noexcept;
  /// True between leadership_gained and leadership_lost.
  bool is_leader() const noexcept { return holding_ && holding_->reported; }
  /// While leading, S + D: the leadership is void from that steady time on, even if the timer
  /// that makes the core demote itself has not run yet (a paused process).
  std::optional<steady_time> leadership_deadline() const noexcept;
  /// While holding the lock, the record of the last successful write (for the peer endpoint).
  const lock_record* held_record() const noexcept;
  /// While holding the lock, S: when the write of held_record() was sent.
  std::optional<steady_time> held_record_sent() const noexcept;
  /// A snapshot of the state.
  core_status status() const;
  /// The store refused refusals_before_giving_up reads in a row, or as many writes, with an
  /// answer no retry changes (is_refusal): credentials, permissions, bucket, region, an
  /// endpoint that is not S3. What ends elector::async_run. Cleared by start().
  bool refused_for_good() const noexcept;

 private:
  // A write this core sent: remembered so that a re-read can recognise it by its nonce.
  struct own_write {
    lock_record record;
    steady_time sent;
    bool grace = false;      // an acquisition of an expired record: report after acquire_grace
    bool resumable = false;  // may still become (or stay) our leadership; false after a demotion
    // D in force when the write was sent. The write advertises the lease of that moment, so a
    // later update_config that raises D must not stretch the leadership this write grants.
    std::chrono::milliseconds renew_deadline{0};
  };
  enum class purpose { read, acquire, renew, release, peer };
  struct in_flight {
    purpose what = purpose::read;
    std::string nonce;  // of the write
  };
  struct holding_state {
    std::uint64_t term = 0;
    std::string etag;
    steady_time renewed_at;                       // S: when the last successful write was sent
    std::chrono::milliseconds renew_deadline{0};  // D when that write was sent
    lock_record record;
    bool reported = false;
    steady_time report_at;  // when the acquire grace ends
    bool verify_pending = false;
    std::optional<steady_time> retry_at;  // next renewal after a renewal that did not land
  };
  enum class observed_kind { absent, released, held, malformed, ours_dead };
  struct observation {
    observed_kind kind = observed_kind::absent;
    std::string etag;
    steady_time first_seen;  // completion of the first read that returned `etag`: rule (b)
    std::optional<lock_record> record;
    // Rule (c): the store's clock says the write of `etag` happened before this time plus
    // max_clock_skew (the least, over the reads that returned `etag`, of the read's completion
    // less Date − Last-Modified − the headers' resolution). Unset: no read carried both headers.
    std::optional<steady_time> store_stamp{};
    // Coordination (apply_coordination): a released record's hold-off ends here; a held
    // record's takeover waits this much past its expiry (our rank in the record).
    std::optional<steady_time> not_before{};
    std::chrono::milliseconds rank_delay{0};
  };
  // A peer's answer that showed the leader's last successful write: that write was sent
  // before `first_at`, our monotonic time when the answer arrived less the write's age the
  // leader reported (docs/peer-mode.md#the-endpoint: a leader reports only writes that landed).
  // Rule (b) may count from here for the ETag holding that record.
  struct peer_evidence {
    lock_record record;
    steady_time first_at;
  };
  // What a follower in peer mode knows of the leader's endpoint.
  struct peer_follow_state {
    std::optional<peer_evidence> seen;
    std::optional<std::uint64_t> serial;  // the leader's write serial, as last told
    std::optional<steady_time> last_at;   // completion of the last peer check
    steady_time sent_at{};                // start of the check in flight
    // After watches answered at once (refused, or faster than a leader renews): the pause
    // before the next one, doubling up to I; zero once a watch is held
    // (docs/peer-mode.md#watches-answered-at-once).
    std::chrono::milliseconds watch_pause{0};
    std::optional<steady_time> deadline;  // a watch following renewals gives up here
    bool watch_unsupported = false;       // the leader answered a watch without holding
    bool introduced = false;              // a plain check has told us the leader's serial (or none)
    bool watching = false;                // the check in flight is a watch
    bool view_stale = false;              // back from peer checks: read before deciding a takeover
  };
  // Quick re-reads after the leader's endpoint went away (docs/peer-mode.md#a-crashed-leader):
  // its guardian may release the lock within milliseconds of the crash.
  struct reread_burst {
    std::string leader_id;  // the leader whose endpoint went away, and its term
    std::uint64_t term = 0;
    std::chrono::milliseconds gap{0};  // from the last read to the next
    std::string etag;                  // what the first read after the failure showed
  };
  struct read_summary {
    std::string etag;
    std::string leader_id;
    std::uint64_t term = 0;
    bool held = false;
  };

  step finish(const instant& now, step out);
  void advance(const instant& now, step& out);
  std::optional<steady_time> next_wake(const instant& now) const;

  void observe(const instant& now, const get_result& result, step& out);
  void observe_own(const instant& now, const std::string& etag, const own_write& own, step& out);
  void observe_foreign(const instant& now, const std::string& etag, const lock_record& record,
                       std::optional<steady_time> store_stamp, step& out);
  void update_mode(const instant& now, const read_summary& read);

  void write_landed(const instant& now, purpose what, const own_write& own, const std::string& etag,
                    step& out);
  void write_failed(const instant& now, purpose what, const own_write& own,
                    const boost::system::error_code& ec, bool cancelled, step& out);
  void become_holder(const instant& now, const own_write& own, const std::string& etag, step& out);
  void demote(loss_reason reason, step& out);
  void step_down_if_clock_refused(const boost::system::error_code& ec, step& out);
  void report_loss(loss_reason reason, step& out);
  void finish_release(const instant& now, bool released, const std::string& etag,
                      const lock_record& written, step& out);

  // Coordinated leadership (election_core_coordination.cpp).
  /// Sets the hold-off of a newly observed released record, or the rank delay of a held one.
  void apply_coordination(observation& seen);
  /// A record this core writes as leader: its priority and candidate ranks, and, in a released
  /// record, the successor with its handoverMs.
  void add_coordination(lock_record& record, bool released) const;
  /// When this follower may compete: takeover_time(), later by the coordination's hold-offs.
  /// Not for the poll mode, which turns frequent at the expiry moment itself.
  std::optional<steady_time> competition_time() const;

  void enforce_deadline(const instant& now, step& out);
  // Preemption (election_core_preemption.cpp).
  bool may_preempt() const;
  preemption_outlook preemption_view(const instant& now) const;
  void consider_preemption(const instant& now, step& out);
  std::optional<steady_time> preemption_wake(const instant& now) const;
  void start_read(step& out);
  bool peer_usable() const;
  steady_time peer_due(const instant& now) const;
  steady_time store_read_due(const instant& now) const;
  void start_peer_check(const instant& now, step& out);
  /// After a watch's answer: when the next one goes (immediately, or after a growing pause).
  void pace_watches(const instant& now, peer_watch_outcome outcome);
  /// A failed peer check: back to the store, with the re-read burst if the endpoint went away.
  void peer_check_failed(const boost::system::error_code& ec, const peer_answer& answer,
                         const lock_record& known);
  void fall_back_to_store(const std::string& why);
  /// After a read: goes on with the re-read burst, or ends it (record changed, gap reached F).
  void continue_reread_burst();
  /// The leader's watch answer names the released record it wrote: observed as if read.
  void take_over_released(const instant& now, const lock_record& known,
                          const peer_answer::released_record& released, step& out);
  void start_write(const instant& now, purpose what, put_condition condition, std::uint64_t term,
                   bool grace, step& out);
  void start_acquisition(const instant& now, step& out);

  std::optional<steady_time> written_by() const;
  std::optional<steady_time> takeover_time() const;
  bool takeover_allowed(const instant& now) const;
  steady_time read_due(const instant& now) const;
  /// S3 mode with follower_reads::first_hand: followers read every F / 2, settled or not.
  bool reads_first_hand() const;
  /// How long a follower waits between two reads of the store (not in a re-read burst).
  std::chrono::milliseconds follower_read_interval() const;
  steady_time renew_due() const;
  steady_time on_clock_probe(steady_time due, std::chrono::milliseconds interval) const;
  std::chrono::milliseconds renew_retry_pause() const;
  std::chrono::milliseconds deadline_of(std::chrono::milliseconds sent_with) const;

  own_write* find_own(const std::string& nonce);
  void announce(std::string id, std::string addr, std::uint64_t term, step& out);
  /// Counts a failed request; last_error becomes the error's message and the store's words.
  void note_failure(const boost::system::error_code& ec, const response_info& info);
  /// Counts `ec` in `streak` (reads' or writes'): one more if a refusal, else back to 0.
  static void count_refusal(unsigned& streak, const boost::system::error_code& ec) noexcept;
  void log(log_level level, const std::string& line) const;

  elector_config config_;
  bool store_authenticated_;
  bool started_ = false;
  bool stop_wanted_ = false;
  bool release_wanted_ = false;
  bool stopped_ = false;

  std::optional<in_flight> in_flight_;
  bool cancel_sent_ = false;
  std::optional<holding_state> holding_;
  bool acquire_in_doubt_ = false;

  std::optional<observation> observed_;
  std::optional<read_summary> previous_read_;
  poll_mode mode_ = poll_mode::frequent;
  int healthy_reads_ = 0;
  std::optional<steady_time> last_read_at_;
  bool read_now_ = false;
  std::optional<steady_time> acquire_not_before_;  // resign()'s hold-off, or a pause after doubt

  peer_follow_state peer_;                       // Peer mode (followers in stable mode).
  std::vector<candidate> candidates_;            // on_candidates(): who may succeed us.
  std::optional<std::string> successor_wanted_;  // resign(): whom the release names
  preemption_memory preemption_;  // whom we handed over to by preemption, and their backoff
  std::optional<std::pair<std::uint64_t, std::string>> advised_;  // (term, successor) advised
  bool acquiring_by_expiry_ = false;  // the acquisition under way takes over an expired record
  std::optional<reread_burst> reread_;

  std::optional<steady_time> clock_probe_;  // set_clock_probe()

  std::uint64_t max_term_seen_ = 0;
  std::deque<own_write> own_writes_;

  std::optional<leader_changed> announced_;
  std::uint64_t last_term_ = 0;
  std::string last_etag_;
  std::optional<steady_time> last_renewal_;
  std::optional<wall_time> last_renewal_wall_;
  std::optional<wall_time> leader_last_seen_;
  std::optional<wall_time> last_election_time_;
  unsigned consecutive_failures_ = 0;
  // Refused reads and refused writes in a row (count_refusal): kept apart, so that a node whose
  // reads succeed but whose writes are refused (read-only credentials) is found out too.
  unsigned refused_reads_ = 0;
  unsigned refused_writes_ = 0;
  boost::system::error_code last_error_code_;
  std::string last_error_;
};

}  // namespace s3lect::inline v1::detail
