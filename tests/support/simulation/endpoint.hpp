// The leaders' health endpoints in the election simulation (peer mode): the member functions of
// world that serve peer checks and watches as s3lect's endpoint does (or an older one, or a Go
// leader's), and deliver their answers. Included by election_core_simulation_test.cpp, after the
// world.
#pragma once

#include "support/simulation/world.hpp"

namespace s3lect::test::simulation {

inline void world::start_peer_check(std::size_t i, const std::shared_ptr<operation>& op) {
  const node& n = nodes_[i];
  const detail::peer_check_request& check = op->request.peer;
  // The client's own deadline: a watch lasts its time plus one attempt's timeout; a plain
  // check runs under the retry policy.
  const nanoseconds give_up = check.watch ? n.config.peer.timeout + *check.watch
                                          : n.config.retry.worst_case(n.config.peer.timeout);
  reply_later(i, op, now_ + give_up, errc::timeout);
  std::optional<std::size_t> leader;
  for (std::size_t k = 0; k < nodes_.size(); ++k) {
    if (nodes_[k].address == check.address) leader = k;
  }
  if (!leader) return reply_later(i, op, now_ + 1ms, errc::connect_failed);
  if (n.partitioned) return;  // nothing gets through: the deadline answers
  const std::size_t k = *leader;
  at(now_ + uniform(1ms, 30ms), [this, i, k, op] {
    node& l = nodes_[k];
    if (l.partitioned) return;
    // Refused by the kernel of a machine whose s3lect process died (after the retry policy's
    // attempts); a dead machine answers nothing, and the client's own deadline ends the check.
    if (!l.alive && l.machine_down) return;
    if (!l.alive) return reply_later(i, op, now_ + uniform(1ms, 1200ms), errc::connect_failed);
    const int incarnation = l.incarnation;
    at_node(k, now_, [this, i, k, op, incarnation] {
      if (nodes_[k].incarnation != incarnation || !nodes_[k].alive) {
        return reply_later(i, op, now_ + 1ms, errc::connection_lost);
      }
      serve_peer(k, i, op);
    });
  });
}

// The endpoint's view, as elector::snapshot(): leader while reported and before S + D.
inline bool world::leading(std::size_t k) const {
  const node& l = nodes_[k];
  if (!l.alive || !l.core || !l.core->is_leader()) return false;
  return local(l, now_).steady < *l.core->leadership_deadline();
}

inline bool world::holds(std::size_t k, const detail::peer_check_request& check) const {
  const node& l = nodes_[k];
  return (leading(k) && l.core->held_record()->term == check.term &&
          (!check.serial || *check.serial == l.write_serial)) ||
         releasing(k, check.term);
}

/// As the endpoint does: a watch on a term whose release is being written is answered once
/// the release is written, so that the follower finds the lock free.
inline bool world::releasing(std::size_t k, std::uint64_t term) const {
  const node& l = nodes_[k];
  if (!l.alive || !l.op || l.op->request.type != storage_request::kind::write) return false;
  const record_decoding writing = decode_record(l.op->request.body);
  return writing.record && writing.record->released && writing.record->term == term;
}

inline void world::serve_peer(std::size_t k, std::size_t i, const std::shared_ptr<operation>& op) {
  node& l = nodes_[k];
  const detail::peer_check_request& check = op->request.peer;
  if (!check.watch || l.endpoint == endpoint_kind::plain_only) {
    return answer_peer(k, i, op, detail::peer_watch_outcome::none);
  }
  if (!holds(k, check)) return answer_peer(k, i, op, detail::peer_watch_outcome::changed);
  l.watches.push_back({i, op});
  refresh_candidates(k);
  const int incarnation = l.incarnation;
  at_node(k, now_ + *check.watch, [this, k, op, incarnation] {
    node& m = nodes_[k];
    if (m.incarnation != incarnation) return;
    const auto it = std::find_if(m.watches.begin(), m.watches.end(),
                                 [&op](const held_watch& w) { return w.op == op; });
    if (it == m.watches.end()) return;
    const std::size_t follower = it->follower;
    m.watches.erase(it);
    answer_peer(k, follower, op, detail::peer_watch_outcome::timeout);
  });
}

inline void world::count_write_serial(std::size_t k) {
  node& l = nodes_[k];
  const auto sent = l.core->is_leader() ? l.core->held_record_sent() : std::nullopt;
  if (sent && sent != l.serial_of) ++l.write_serial;
  l.serial_of = sent;
}

inline void world::answer_changed_watches(std::size_t k) {
  node& l = nodes_[k];
  for (std::size_t w = 0; w < l.watches.size();) {
    if (holds(k, l.watches[w].op->request.peer)) {
      ++w;
      continue;
    }
    const held_watch done = l.watches[w];
    l.watches.erase(l.watches.begin() + static_cast<std::ptrdiff_t>(w));
    answer_peer(k, done.follower, done.op, detail::peer_watch_outcome::changed);
  }
}

inline void world::answer_peer(std::size_t k, std::size_t i, const std::shared_ptr<operation>& op,
                               detail::peer_watch_outcome outcome) {
  const node& l = nodes_[k];
  refresh_candidates(k);
  detail::peer_answer answer;
  answer.watch = outcome;
  if (leading(k)) {
    answer.leader = true;
    answer.http_status = 200;
    answer.record = *l.core->held_record();
    answer.term = answer.record.term;
    answer.leader_id = answer.record.leader_id;
    if (l.endpoint != endpoint_kind::plain_only) answer.serial = l.write_serial;
    if (l.endpoint == endpoint_kind::full) {
      // Rounded down, as the endpoint does: the follower's estimate must not be too early.
      answer.write_age = std::max(0ms, std::chrono::floor<milliseconds>(
                                           local(l, now_).steady - *l.core->held_record_sent()));
    }
  } else {
    answer.http_status = 404;
    if (l.endpoint == endpoint_kind::full && l.released) answer.released = *l.released;
  }
  const int incarnation = nodes_[i].incarnation;
  at_node(i, now_ + uniform(1ms, 30ms), [this, i, op, incarnation, answer] {
    if (nodes_[i].incarnation == incarnation) deliver_peer(i, op, {}, answer);
  });
}

inline void world::deliver_peer(std::size_t i, const std::shared_ptr<operation>& op, error_code ec,
                                const detail::peer_answer& answer) {
  node& n = nodes_[i];
  if (op->replied || n.op != op) return;
  op->replied = true;
  n.op.reset();
  const instant here = local(n, now_);
  if (!ec) ++peer_answers_;
  if (!ec && answer.leader && answer.write_age) {
    const steady_time sent_by = here.steady - *answer.write_age;
    const auto [it, fresh] = n.told.emplace(answer.record.nonce, sent_by);
    if (!fresh) it->second = std::min(it->second, sent_by);
  }
  apply(i, n.core->on_peer_done(here, ec, answer));
  if (answer.released && n.op && n.op->request.type == storage_request::kind::write) {
    ++named_release_takeovers_;
  }
}

inline void world::refresh_candidates(std::size_t k) {
  if (!scenario_.coordinated) return;
  // Later, as an event of its own: the core's step may answer watches, which calls this again.
  const int incarnation = nodes_[k].incarnation;
  at_node(k, now_, [this, k, incarnation] {
    node& l = nodes_[k];
    if (l.incarnation != incarnation || !l.alive || !l.running) return;
    const steady_time here = local(l, now_).steady;
    std::map<std::string, steady_time> since;
    std::vector<detail::candidate> list;
    for (const held_watch& w : l.watches) {
      const node& f = nodes_[w.follower];
      if (since.count(f.id)) continue;
      const auto known = l.watching_since.find(f.id);
      since[f.id] = known != l.watching_since.end() ? known->second : here;
      list.push_back({f.id, f.config.coordination.priority, since[f.id], true, true});
    }
    l.watching_since = std::move(since);
    if (list == l.candidates) return;
    l.candidates = list;
    apply(k, l.core->on_candidates(local(l, now_), std::move(list)));
  });
}

inline bool world::successor_ready(std::size_t k, const std::string& id) const {
  if (state_ != store_state::healthy) return false;
  return std::any_of(nodes_[k].watches.begin(), nodes_[k].watches.end(), [&](const held_watch& w) {
    const node& f = nodes_[w.follower];
    return f.id == id && f.alive && f.running && !f.partitioned && !f.suspended && !f.frozen;
  });
}

}  // namespace s3lect::test::simulation
