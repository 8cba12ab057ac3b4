// The coroutine layer of the election simulation: the member functions of world that perform a
// core's steps (notices, operations, the timer), carry requests to the store through its faults
// and latency, and deliver the answers. Included by election_core_simulation_test.cpp, after the
// world.
#pragma once

#include "support/simulation/world.hpp"

namespace s3lect::test::simulation {

inline void world::apply(std::size_t i, step s) {
  node& n = nodes_[i];
  const instant here = local(n, now_);
  if (s.wake_at) {
    ASSERT_GT(*s.wake_at, here.steady) << n.label(i) << ": timer would spin";
  }
  if (s.cancel_operation) {
    ASSERT_TRUE(n.op) << n.label(i) << ": cancel without an operation";
    reply_later(i, n.op, now_ + 1ms, boost::asio::error::operation_aborted);
  }
  for (const core_notice& notice : s.notices) {
    if (const auto* gained = std::get_if<leadership_gained>(&notice)) on_gained(i, *gained);
    if (const auto* lost = std::get_if<leadership_lost>(&notice); lost && n.leader) {
      n.leader = false;
      checker_.ended(n.period, now_);
      if (lost->reason == detail::loss_reason::preempted) coordination_.preempted();
    }
    if (std::get_if<detail::core_stopped>(&notice)) n.running = false;
    if (const auto* finished = std::get_if<detail::release_finished>(&notice)) {
      if (finished->released) {
        n.released = detail::peer_answer::released_record{finished->etag, finished->term,
                                                          finished->successor, finished->handover};
      }
    }
    if (const auto* changed = std::get_if<detail::leader_changed>(&notice)) {
      if (!changed->leader_id.empty()) n.released.reset();
    }
  }
  guardian_after_step(i, s);
  if (n.leader && n.core->is_leader()) checker_.renewed(n.period, *n.core->leadership_deadline());
  if (s.operation) {
    ASSERT_FALSE(n.op) << n.label(i) << ": a second operation while one is in flight";
    start_operation(i, std::move(*s.operation));
  }
  ++n.timer_generation;
  if (s.wake_at) arm_timer(i, *s.wake_at, n.timer_generation, n.incarnation);
  EXPECT_EQ(n.core->is_leader(), n.leader) << n.label(i);
  count_write_serial(i);
  answer_changed_watches(i);
}

inline void world::arm_timer(std::size_t i, steady_time when, std::uint64_t generation,
                             int incarnation) {
  at_node(i, first_real(nodes_[i], when).value_or(now_), [=, this] {
    node& n = nodes_[i];
    if (n.incarnation != incarnation || n.timer_generation != generation || !n.alive) return;
    // A boot clock that stopped during a suspend reaches the time later than planned.
    if (local(n, now_).steady < when) return arm_timer(i, when, generation, incarnation);
    apply(i, n.core->on_timer(local(n, now_)));
  });
}

inline void world::on_gained(std::size_t i, const leadership_gained& gained) {
  node& n = nodes_[i];
  n.period = checker_.gained(now_, n.process(i), n.label(i), gained.term, n.config,
                             n.core->leadership_deadline(), store_->acquisition_of(gained.term));
  n.leader = true;
  ++gains_;
  const acquisition* taken = store_->acquisition_of(gained.term);
  if (taken && taken->kind == acquisition_kind::released) {
    const auto release = crash_released_.find(taken->replaced_committed);
    if (release != crash_released_.end()) {
      crash_failovers_.push_back(now_ - release->second);
      release_takeovers_.push_back(now_ - release->first);
    }
  }
}

inline void world::start_operation(std::size_t i, storage_request request) {
  node& n = nodes_[i];
  auto op = std::make_shared<operation>();
  op->request = std::move(request);
  op->sender = n.process(i);
  op->sent = local(n, now_).steady;
  n.op = op;
  if (op->request.type == storage_request::kind::peer_check) return start_peer_check(i, op);
  const bool is_write = op->request.type == storage_request::kind::write;
  if (is_write) op->reason = std::exchange(n.acquiring, {});
  if (is_write && op->request.condition.type == put_condition::kind::if_match) {
    const auto seen = n.first_read.find(op->request.condition.etag);
    if (seen != n.first_read.end()) {
      op->evidence = seen->second.first;
      const auto told = n.told.find(seen->second.second);
      if (told != n.told.end()) op->evidence = std::min(*op->evidence, told->second);
    }
  }
  send_to_store(i, op);
}

// A request of node i (its core's or its guardian's) meets the store's faults and latency.
inline void world::send_to_store(std::size_t i, const std::shared_ptr<operation>& op) {
  const node& n = nodes_[i];
  const bool is_write = op->request.type == storage_request::kind::write;
  const nanoseconds worst = n.config.retry.worst_case(n.config.request_timeout);
  const store_state state =
      n.partitioned ? (chance(0.5) ? store_state::hanging : store_state::failing) : state_;
  const error_code unknown =
      is_write ? error_code(errc::outcome_unknown) : error_code(errc::timeout);
  switch (state) {
    case store_state::hanging:
      if (is_write && chance(0.1)) reach_store(op, now_ + worst + uniform(0ms, 3000ms));
      reply_later(i, op, now_ + worst, unknown);
      return;
    case store_state::failing:
      if (is_write && chance(0.3)) reach_store(op, now_ + uniform(0ms, 200ms));
      reply_later(i, op, now_ + uniform(0ms, 200ms) + (chance(0.5) ? worst / 2 : nanoseconds{}),
                  is_write ? error_code(errc::outcome_unknown) : error_code(errc::server_error));
      return;
    case store_state::healthy:
      break;
  }
  const nanoseconds reach = now_ + uniform(1ms, store_latency_);
  const double fault = calm_ ? 0.0 : 1.0;  // the calm period checks liveness: no faults
  if (chance(0.03 * fault)) {  // lost reply, or a request stuck until its timeout that lands
    reach_store(op, chance(0.5) ? reach : now_ + worst + uniform(0ms, 3000ms));
    reply_later(i, op, now_ + worst, unknown);
    return;
  }
  if (is_write && chance(0.02 * fault)) {  // 409: undecided, nothing written
    reply_later(i, op, reach, errc::conflict);
    return;
  }
  const nanoseconds answer = reach + uniform(1ms, store_latency_);
  reach_store(op, reach, uniform(0ms, answer - reach));
  const bool garble = is_write && chance(0.05 * fault);  // 500 after the fact (Ceph's too)
  // The answer says what the store did, known once the request has reached it.
  at(answer, [this, i, op, garble] {
    const bool lost_race = op->request.type == storage_request::kind::write && !op->new_etag;
    reply_later(i, op, now_,
                garble      ? error_code(errc::server_error)
                : lost_race ? error_code(errc::precondition_failed)
                            : error_code());
  });
}

// The request reaches the store at `when`; a GET's answer is dated up to `dating` later.
inline void world::reach_store(const std::shared_ptr<operation>& op, nanoseconds when,
                               nanoseconds dating) {
  at(when, [this, op, dating] {
    const std::size_t fe = rng_() % store_->front_ends();
    if (op->request.type == storage_request::kind::read) {
      op->read_value = store_->read(fe, now_ + dating);
      if (store_->current()) op->read_nonce = store_->current()->record.nonce;
      return;
    }
    op->new_etag = store_->write(op->request.body, op->request.condition, op->sender, fe, now_);
    if (op->new_etag) committed(*op);
    if (op->new_etag && op->crashed_at) crash_released_.emplace(now_, *op->crashed_at);
  });
}

// A write of `op` just landed: checks what the store alone can tell.
inline void world::committed(const operation& op) {
  const stored_version& version = *store_->current();
  const node& n = nodes_[op.sender.node];
  const std::string who =
      n.id + "@" + std::to_string(op.sender.node) + "#" + std::to_string(op.sender.incarnation);
  if (version.record.released) {
    note(who,
         "STORE released term=" + std::to_string(version.record.term) + " " + version.value.etag);
    checker_.released(now_, op.sender);
    coordination_.released(now_, version.record,
                           successor_ready(op.sender.node, version.record.successor));
    return;
  }
  const acquisition* taken = store_->acquisition_of(version.record.term);
  if (!taken || taken->committed != now_ || !(taken->writer == op.sender)) return;  // renewal
  note(who, std::string("STORE acquired term=") + std::to_string(version.record.term) + " " +
                version.value.etag + " kind=" + to_string(taken->kind));
  if (taken->kind == acquisition_kind::released) {
    coordination_.acquired(now_, taken->replaced_committed, n.id, n.config.lease, checker_);
  }
  if (taken->kind != acquisition_kind::expired) return;
  ++expiry_takeovers_;
  // A held record of another process taken for released, absent or ours skipped the expiry
  // rule's wait (and the acquire grace).
  if (op.reason != "expired") {
    checker_.violation(
        now_, who + " took over a held record of another process for \"" + op.reason + "\"");
  }
  // Rule (b) alone allows the takeover L after the first evidence of the replaced write; an
  // earlier one needs rule (c), hence a dated answer and max_clock_skew.
  const milliseconds lease = std::max(n.config.lease, taken->replaced_lease.value_or(0ms));
  if (!op.evidence) {
    checker_.violation(now_, who + " took over a record it never read");
    return;
  }
  if (op.sent >= *op.evidence + lease) return;
  if (store_->dated() && n.config.max_clock_skew) {
    ++store_dated_takeovers_;
    return;
  }
  checker_.violation(now_, who + " took over " + in_ms(*op.evidence + lease - op.sent) +
                               " sooner than rule (b) allows, without rule (c)");
}

// The answer to `op` reaches node i at `when`: its core (dropped if that process is gone) or
// its guardian (dropped if the machine is).
inline void world::reply_later(std::size_t i, const std::shared_ptr<operation>& op,
                               nanoseconds when, error_code ec) {
  if (op->guardian) {
    const int machine = nodes_[i].machine;
    return at_guardian(i, when, [this, i, op, machine, ec] {
      if (nodes_[i].machine != machine || op->replied) return;
      op->replied = true;
      op->guardian(ec, *op);
    });
  }
  const int incarnation = nodes_[i].incarnation;
  at_node(i, when, [this, i, op, incarnation, ec] {
    if (nodes_[i].incarnation != incarnation) return;
    if (op->request.type == storage_request::kind::peer_check) {
      return deliver_peer(i, op, ec, detail::peer_answer{});
    }
    deliver(i, op, ec);
  });
}

inline void world::deliver(std::size_t i, const std::shared_ptr<operation>& op, error_code ec) {
  node& n = nodes_[i];
  if (op->replied || n.op != op) return;
  op->replied = true;
  n.op.reset();
  const instant here = local(n, now_);
  if (op->request.type == storage_request::kind::read) {
    get_result result;
    if (!ec) {
      result = op->read_value;
      if (result.found) {
        n.first_read.emplace(result.found->etag, std::pair{here.steady, op->read_nonce});
      }
    }
    apply(i, n.core->on_read_done(here, ec, result));
  } else {
    put_result result;
    if (!ec) result.etag = *op->new_etag;
    apply(i, n.core->on_write_done(here, ec, result));
  }
}

}  // namespace s3lect::test::simulation
