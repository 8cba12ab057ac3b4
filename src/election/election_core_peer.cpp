// The election core in peer mode (docs/peer-mode.md#how-it-works): when a stable follower asks the
// leader instead of the store, and what the leader's answer means.
#include "election_core.hpp"
#include "election_core_helpers.hpp"
#include "log_text.hpp"

#include <s3lect/error.hpp>

#include <algorithm>

namespace s3lect::inline v1::detail {

using namespace core_helpers;

using std::chrono::milliseconds;

namespace {

// The first pause of the re-read burst; each next one is twice as long, until F.
constexpr milliseconds first_reread_gap{50};
// The first pause after a watch answered at once; each next one is twice as long, until I. A
// leader that answers every watch at once (a bug, or a full server) then gets at most three
// watches in any second and seven in the first 30 s, instead of one per round trip.
constexpr milliseconds first_watch_pause{250};
// A leader answers a watch on its serial when it next renews, every F. An answer within a
// quarter of that (at most 1 s) was not held: the watch was answered at once.
constexpr milliseconds longest_quick_watch{1000};

// A stable follower reads the store at least every this many I, however well the leader says
// it is: no peer (an impostor reached through a trusted plain-HTTP store, or a leader whose
// endpoint answers while its elector is wedged) holds it off the store for longer. Every I
// would cost what S3 mode costs and leave no room for plain checks (docs/peer-mode.md).
constexpr int store_read_every_intervals = 10;

/// The leader's endpoint is not there any more: nobody listens (refused), or the connection was
/// closed or reset under a check or a watch. What a crashed process leaves behind; a frozen one
/// keeps its connections and gives timeouts instead.
bool endpoint_went_away(const boost::system::error_code& ec) {
  return ec == errc::connect_failed || ec == errc::connection_lost;
}

}  // namespace

step election_core::on_peer_done(const instant& now, const boost::system::error_code& ec,
                                 const peer_answer& answer) {
  step out;
  if (!in_flight_ || in_flight_->what != purpose::peer) return finish(now, std::move(out));
  in_flight_.reset();
  cancel_sent_ = false;
  peer_.deadline.reset();
  peer_.last_at = now.steady;
  const bool was_watch = peer_.watching;
  peer_.watching = false;
  if (stop_wanted_ || !observed_ || observed_->kind != observed_kind::held) {
    return finish(now, std::move(out));
  }
  const lock_record& known = *observed_->record;
  if (ec) {
    peer_check_failed(ec, answer, known);
    return finish(now, std::move(out));
  }
  if (!answer.leader) {
    if (answer.released && answer.released->term == known.term) {
      take_over_released(now, known, *answer.released, out);
    } else {
      fall_back_to_store("leader_says_not_leader");
    }
    return finish(now, std::move(out));
  }
  if (answer.leader_id != known.leader_id || (answer.term != 0 && answer.term != known.term)) {
    fall_back_to_store("peer_is_another_leader peer=" + log_text::value(answer.leader_id) +
                       " term=" + std::to_string(answer.term));
    return finish(now, std::move(out));
  }
  if (answer.watch == peer_watch_outcome::stopping) {
    fall_back_to_store("leader_server_stopping");
    return finish(now, std::move(out));
  }
  // Healthy: the leader answered with its last successful write, sent at least `write_age`
  // before the answer reached us (the leader measured the age before answering, and the
  // answer took time to arrive): rule (b) may count from there.
  const steady_time sent_by = now.steady - answer.write_age.value_or(std::chrono::milliseconds{0});
  if (!peer_.seen || !same_record(peer_.seen->record, answer.record)) {
    peer_.seen = peer_evidence{answer.record, sent_by};
  } else {
    peer_.seen->first_at = std::min(peer_.seen->first_at, sent_by);
  }
  peer_.serial = answer.serial;
  peer_.introduced = true;
  if (was_watch) pace_watches(now, answer.watch);
  return finish(now, std::move(out));
}

void election_core::pace_watches(const instant& now, peer_watch_outcome outcome) {
  // A leader that does not watch at all (a Go leader) is polled every I.
  peer_.watch_unsupported = outcome == peer_watch_outcome::none;
  const milliseconds quick = std::min(config_.frequent_interval / 4, longest_quick_watch);
  const bool answered_at_once =
      outcome == peer_watch_outcome::refused || now.steady - peer_.sent_at < quick;
  if (!answered_at_once) {
    peer_.watch_pause = milliseconds{0};
    return;
  }
  // A full server (or one whose watching is off) may have room later: ask again, less and
  // less often, rather than poll it for ever; a leader answering at once must not make us spin.
  peer_.watch_pause = peer_.watch_pause == milliseconds{0}
                          ? first_watch_pause
                          : std::min(peer_.watch_pause * 2, config_.infrequent_interval);
  log(log_level::debug,
      "watch answered at once: next one in pause_ms=" + std::to_string(peer_.watch_pause.count()));
}

bool election_core::peer_usable() const {
  // Only a stable follower that knows a healthy leader's address; everything else reads S3.
  return config_.peer.enabled && mode_ == poll_mode::stable && !read_now_ && observed_ &&
         observed_->kind == observed_kind::held && observed_->record &&
         !observed_->record->leader_addr.empty();
}

steady_time election_core::peer_due(const instant& now) const {
  // A watch is asked for again at once (the leader holds it until something happens), unless
  // the last ones were answered at once. The plain check that introduces a watched leader (it
  // tells the serial) goes at once too.
  if (config_.peer.watch && !peer_.watch_unsupported) {
    return peer_.last_at ? std::max(now.steady, *peer_.last_at + peer_.watch_pause) : now.steady;
  }
  steady_time last = last_read_at_.value_or(now.steady);
  if (peer_.last_at) last = std::max(last, *peer_.last_at);
  return last + config_.infrequent_interval;
}

steady_time election_core::store_read_due(const instant& now) const {
  if (!last_read_at_) return now.steady;
  return *last_read_at_ + store_read_every_intervals * config_.infrequent_interval;
}

void election_core::start_peer_check(const instant& now, step& out) {
  const lock_record& leader = *observed_->record;
  in_flight_ = in_flight{purpose::peer, {}};
  peer_.sent_at = now.steady;
  storage_request request;
  request.type = storage_request::kind::peer_check;
  request.peer.address = leader.leader_addr;
  // A pin is only as good as the record that carried it: from a store anyone on the path may
  // answer for, the leader is checked against peer.tls's CAs instead
  // (docs/peer-mode.md#trust-chain).
  if (store_authenticated_ || config_.peer.trust_unauthenticated_store) {
    request.peer.key_pin = leader.key_pin;
  }
  request.peer.term = leader.term;
  // With watches on: first a plain check, which answers at once with the leader's write serial,
  // then watches. With a serial the leader answers on each renewal, so silence for D means
  // trouble; without one (a leader that does not count writes) the watch only ends on a change
  // of leadership or after I.
  if (config_.peer.watch && !peer_.watch_unsupported && peer_.introduced) {
    request.peer.watch = config_.infrequent_interval;
    peer_.watching = true;
    if (peer_.serial) {
      request.peer.serial = peer_.serial;
      peer_.deadline = now.steady + config_.renew_deadline;
    }
  }
  out.operation = std::move(request);
}

void election_core::take_over_released(const instant& now, const lock_record& known,
                                       const peer_answer::released_record& released, step& out) {
  // The leader we follow says it replaced its record by a released one with this ETag. Taken
  // as if read from the store: the usual rules then write the takeover with If-Match on that
  // ETag. S3 applies it only if the object is still exactly that released record, whose term
  // the leader that wrote it told us; any other write in between fails it with 412, which
  // reads the store as ever (docs/safety-and-fencing.md#one-round-trip-handover).
  log(log_level::info, "leader released through the watch: taking over without a read etag=" +
                           log_text::value(released.etag) +
                           " term=" + std::to_string(released.term));
  lock_record record = known;
  record.term = released.term;
  record.released = true;
  // The release's names, as the leader's answer tells them: without them every watcher would
  // race the successor. Nothing of the held record's own coordination is the release's.
  record.successor = released.successor;
  record.handover = released.handover;
  record.keep_out.clear();
  get_result hint;
  hint.found = object{encode_record(record), released.etag};
  mode_ = poll_mode::frequent;
  healthy_reads_ = 0;
  observe(now, hint, out);
}

void election_core::peer_check_failed(const boost::system::error_code& ec,
                                      const peer_answer& answer, const lock_record& known) {
  // Includes our own cancellation of a watch that heard of no renewal for D.
  last_error_code_ = ec;
  last_error_ =
      "peer check: " + ec.message() + (answer.message.empty() ? "" : ": ") + answer.message;
  fall_back_to_store("peer_check_failed error=" + log_text::value(last_error_));
  // "Went away" only if it was there: an endpoint that never answered for this leadership
  // (not running, a firewall) would otherwise cost a burst every time we go stable.
  const bool answered_before = peer_.seen && peer_.seen->record.leader_id == known.leader_id &&
                               peer_.seen->record.term == known.term;
  if (endpoint_went_away(ec) && answered_before) {
    reread_ = reread_burst{known.leader_id, known.term, first_reread_gap, {}};
    log(log_level::info, "leader's endpoint went away: re-reading the store soon for a release");
  }
}

void election_core::continue_reread_burst() {
  if (!reread_) return;
  // Only while the record is still the one the first read found, held by the leader that went
  // away: anything else (released, absent, a new holder, a renewal that shows the leader alive)
  // is for the usual rules.
  const bool held = !holding_ && observed_ && observed_->kind == observed_kind::held &&
                    observed_->record->leader_id == reread_->leader_id &&
                    observed_->record->term == reread_->term;
  if (!held || (!reread_->etag.empty() && reread_->etag != observed_->etag)) {
    reread_.reset();
    return;
  }
  if (reread_->etag.empty()) {
    reread_->etag = observed_->etag;  // the first read: the next one follows the first gap
    return;
  }
  reread_->gap *= 2;
  if (reread_->gap >= config_.frequent_interval) reread_.reset();
}

void election_core::fall_back_to_store(const std::string& why) {
  log(log_level::info, "peer check says read the store: back to frequent mode reason=" + why);
  reread_.reset();
  mode_ = poll_mode::frequent;
  healthy_reads_ = 0;
  read_now_ = true;
  peer_.view_stale = true;
  peer_.serial.reset();
  peer_.watch_unsupported = false;
  peer_.introduced = false;
}

}  // namespace s3lect::inline v1::detail
