// The public elector: builds its parts (elector_impl.hpp) and hands each call to the one that
// does the job: the loop for start, stop, resign and update_config; the publisher for every
// read and wait.
#include "s3lect/elector.hpp"

#include "elector_health_source.hpp"
#include "elector_impl.hpp"

#include <s3lect/error.hpp>
#include <s3lect/record.hpp>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/dispatch.hpp>

namespace s3lect::inline v1 {

namespace asio = boost::asio;
using boost::system::error_code;

namespace {

elector_config validated(elector_config config, const storage& store) {
  if (auto problem = config.validate(store)) {
    throw boost::system::system_error(errc::invalid_config, *problem);
  }
  return config;
}

}  // namespace

elector::impl::impl(executor_type executor, storage& store_ref, elector_config config)
    : strand(asio::make_strand(executor)),
      hook_strand(asio::make_strand(executor)),
      clock(detail::clock_source::of(strand)),
      claim_token(make_nonce() + make_nonce()),
      store_authenticated(store_ref.answers_authenticated()),
      store(store_ref, strand),
      store_clock(clock),
      publisher(detail::completion_executors{strand, executor}, clock, config.server_id,
                config.lock_key),
      advice(detail::completion_executors{strand, executor}),
      candidates(detail::candidate_limits_for(config)),
      config_snapshot(config),
      peer(detail::make_peer_client(strand, config, claim_token)),
      core(std::move(config), store_authenticated),
      loop(strand, clock),
      candidate_work(strand, clock) {}

elector::elector(executor_type executor, storage& store, elector_config config)
    : impl_(
          std::make_shared<impl>(std::move(executor), store, validated(std::move(config), store))),
      health_source_(std::make_unique<detail::elector_health_source>(
          *this, impl_->publisher,
          // Hands the endpoint's claims to the elector while it exists.
          [weak = std::weak_ptr<impl>(impl_)](const candidate_claim& claim) {
            if (auto self = weak.lock()) self->note_candidate(claim);
          })) {}

elector::~elector() {
  auto self = impl_;
  self->store.clear();  // From here on no request reaches the storage.
  self->publisher.fail_all_waiters();
  self->advice.fail_all();
  asio::dispatch(self->strand, [self] {
    if (self->loop.running) self->push(detail::shutdown_request{});
  });
}

elector::executor_type elector::get_executor() const {
  return impl_->strand.get_inner_executor();
}

void elector::start() {
  auto self = impl_;
  asio::dispatch(self->strand, [self] {
    if (self->loop.running || self->loop.shutting_down) return;
    self->loop.running = true;
    self->publisher.started();
    asio::co_spawn(self->strand, impl::run_loop(self), asio::detached);
    self->register_candidate(self->core.config());
  });
}

void elector::run_impl(stop_handler handler) {
  impl_->publisher.add_run_waiter(std::move(handler));
  start();
}

void elector::stop_impl(stop_handler handler) {
  auto self = impl_;
  self->publisher.add_stop_waiter(std::move(handler));
  asio::dispatch(self->strand, [self] {
    if (!self->loop.running) {
      self->publisher.complete_stop_waiters();
      return;
    }
    self->push(detail::stop_request{});
  });
}

void elector::resign_impl(std::optional<std::string> successor, bool check_successor,
                          stop_handler handler) {
  auto self = impl_;
  if (check_successor && successor && !self->knows_successor(*successor)) {
    self->publisher.refuse_resign(std::move(handler), errc::unknown_successor);
    return;
  }
  if (!self->publisher.add_resign_waiter(std::move(handler))) return;
  asio::dispatch(self->strand, [self, successor = std::move(successor)]() mutable {
    // The elector stopped since the check above (core_stopped completed the waiter): a queued
    // request would wrongly hold off the next run's first acquisition.
    if (!self->loop.running) return;
    self->push(
        detail::resign_request{detail::resign_hold_off(self->core.config()), std::move(successor)});
  });
}

void elector::wait_for_leadership_impl(lease_handler handler) {
  impl_->publisher.wait_for_leadership(std::move(handler));
}

void elector::wait_for_loss_impl(leadership_lease lease, stop_handler handler) {
  impl_->publisher.wait_for_loss(lease, std::move(handler));
}

void elector::wait_for_handover_advice_impl(leadership_lease lease, advice_handler handler) {
  impl_->advice.wait(lease.term, std::move(handler));
}

void elector::wait_for_next_election_impl(std::chrono::system_clock::time_point since,
                                          status_handler handler) {
  impl_->publisher.wait_for_next_election(since, std::move(handler));
}

void elector::wait_for_change_impl(std::uint64_t seen_version, status_handler handler) {
  impl_->publisher.wait_for_change(seen_version, std::move(handler));
}

bool elector::is_leader() const {
  return impl_->publisher.is_leader();
}

std::string elector::leader_id() const {
  return impl_->publisher.leader_id();
}

leadership_status elector::status() const {
  leadership_status status = impl_->publisher.status();
  status.clock_offset = impl_->store_clock.offset();
  if (status.is_leader) status.candidates = impl_->candidates.shown(impl_->clock.now());
  return status;
}

elector_counters elector::counters() const {
  return impl_->publisher.counters();
}

leadership_snapshot elector::snapshot() const {
  leadership_snapshot snapshot = impl_->publisher.snapshot();
  if (snapshot.is_leader) snapshot.candidates = impl_->candidates.shown(impl_->clock.now());
  return snapshot;
}

leadership_source& elector::health_source() noexcept {
  return *health_source_;
}

liveness_report elector::liveness(liveness_limits limits) const {
  const detail::liveness_facts facts = impl_->publisher.liveness();
  std::unique_lock lock(impl_->config_mutex);
  limits = detail::resolved_limits(limits, impl_->config_snapshot);
  lock.unlock();
  return detail::assess_liveness(facts, impl_->clock.now(), limits);
}

elector_config elector::config() const {
  std::lock_guard lock(impl_->config_mutex);
  return impl_->config_snapshot;
}

std::optional<std::string> elector::update_config(elector_config config) {
  auto self = impl_;
  std::optional<std::shared_ptr<detail::peer_client>> new_peer;
  {
    std::lock_guard lock(self->config_mutex);
    if (auto problem = validate_update(self->config_snapshot, config)) return problem;
    if (auto problem = validate_store_trust(config.peer, self->store_authenticated)) return problem;
    if (!detail::same_peer_settings(self->config_snapshot, config)) {
      try {
        new_peer = detail::make_peer_client(self->strand, config, self->claim_token);
      } catch (const boost::system::system_error& e) {
        return std::string(e.what());
      }
    }
    self->config_snapshot = std::move(config);
  }
  if (new_peer) {
    // Checks in flight keep the client they started with (they hold a reference).
    asio::dispatch(self->strand, [self, client = std::move(*new_peer)] { self->peer = client; });
  }
  asio::dispatch(self->strand, [self] {
    // The snapshot as it is now, not the caller's copy: with update_config() called from two
    // threads, the strand may run their requests in the other order, and the last one to run
    // must leave the core with the configuration config() reports.
    elector_config latest;
    {
      std::lock_guard lock(self->config_mutex);
      latest = self->config_snapshot;
    }
    self->candidates.set_limits(detail::candidate_limits_for(latest));
    if (self->loop.running) {
      // Peer mode switched on, or a new priority: the registration must say so.
      if (latest.peer.enabled &&
          latest.coordination.priority != self->candidate_work.registered_priority) {
        self->register_candidate(latest);
      }
      self->push(detail::config_request{std::move(latest)});
    } else {
      // Stopped (or never started): the core keeps its state, e.g. the writes it remembers.
      self->core.update_config(self->now(), std::move(latest));
    }
  });
  return std::nullopt;
}

}  // namespace s3lect::inline v1
