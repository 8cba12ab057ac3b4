// This node's own registration object (docs/peer-mode.md#claims-that-cannot-be-forged): written
// at start, and kept: re-read at each change of leader, with the first read of the lock 10 I
// after the last upkeep (a stable follower's read of the store every 10 I, so the two GETs come
// together and the follower is quiet in between), and at once (at most once per I) when the
// leader's record lists our id at a priority we do not have: someone else's claim of it was
// verified. A registration that no longer names this elector's token is rewritten, so that a
// principal that may write `KEY.candidates/*` and took our id with its own token loses it
// again; the rewrite is logged as a warning, since per-node write permissions prevent it
// (docs/iam-policy.md). Reading every I instead would cost a watching follower 2.2 GET a minute
// instead of 0.4, for nothing a leader's record does not show sooner.
#include "candidate_registration.hpp"
#include "elector_impl.hpp"
#include "log_text.hpp"

#include <s3lect/error.hpp>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>

#include <algorithm>
#include <utility>

namespace s3lect::inline v1 {

namespace asio = boost::asio;
using boost::system::error_code;

void elector::impl::register_candidate(const elector_config& config) {
  if (!config.peer.enabled) return;
  candidate_work.registered_priority = config.coordination.priority;
  if (candidate_work.upkeep_running) {
    candidate_work.upkeep_again = true;
    return;
  }
  candidate_work.upkeep_running = true;
  asio::co_spawn(strand, run_registration(shared_from_this(), config), asio::detached);
}

void elector::impl::check_own_listing(const lock_record& record) {
  const elector_config& config = core.config();
  if (!config.peer.enabled || record.leader_id == config.server_id) return;
  const auto now = clock.now();
  const auto& listed = record.candidates;
  const auto us = std::find_if(listed.begin(), listed.end(),
                               [&](const ranked_candidate& c) { return c.id == config.server_id; });
  // Our own priority change shows the old one until the leader reads us again: the rate limit
  // makes that cost one GET.
  const bool forged = us != listed.end() && us->priority != config.coordination.priority;
  if (!forged || now < candidate_work.listing_check_after) return;
  candidate_work.listing_check_after = now + config.infrequent_interval;
  register_candidate(config);
}

void elector::impl::upkeep_after_lock_read() {
  if (candidate_work.upkeep_due && clock.now() >= *candidate_work.upkeep_due) {
    register_candidate(core.config());
  }
}

/// GET, then PUT If-None-Match: * or If-Match: <etag> (storage has no unconditional PUT). A lost
/// race is another process with our server_id writing at once: read again, at most three times.
asio::awaitable<void> elector::impl::run_registration(std::shared_ptr<impl> self,
                                                      elector_config config) {
  const std::string key = detail::registration_key(config.lock_key, config.server_id);
  const std::string body =
      detail::registration_body(config.server_id, config.coordination.priority, self->claim_token);
  error_code ec;
  bool written = false;
  bool overwritten = false;
  for (int attempt = 0; attempt < 3; ++attempt) {
    auto [read_ec, current] = co_await read_attempt(self, key, config.request_timeout);
    ec = read_ec;
    if (ec || (current.found && current.found->body == body)) break;
    // Ours until now, and someone else's since: another writer replaced it.
    const std::string& ours = self->candidate_work.written_body;
    overwritten = overwritten || (!ours.empty() && (!current.found || current.found->body != ours));
    const put_condition condition =
        current.found ? put_condition::matches(current.found->etag) : put_condition::absent();
    auto [put_ec, put] = co_await write_attempt(self, key, body, condition, config.request_timeout);
    (void)put;
    ec = put_ec;
    written = !ec;
    if (ec != errc::precondition_failed && ec != errc::conflict) break;
  }
  auto& work = self->candidate_work;
  if (!ec) work.written_body = body;
  work.upkeep_running = false;
  work.upkeep_due = self->clock.now() + 10 * config.infrequent_interval;
  if (std::exchange(work.upkeep_again, false)) self->register_candidate(self->core.config());
  if (overwritten) {
    self->log(log_level::warning,
              "candidate registration was overwritten by another writer key=" +
                  log_text::value(key) + (written ? ": rewritten" : ": not rewritten yet") +
                  "; give each node write access to its own registration key only "
                  "(docs/iam-policy.md)");
  }
  if (!ec) {
    if (written) {
      self->log(log_level::debug, "candidate registration written key=" + log_text::value(key));
    }
    co_return;
  }
  if (std::exchange(work.registration_warned, true)) co_return;
  self->log(log_level::warning,
            "candidate registration not written key=" + log_text::value(key) +
                " error=" + log_text::value(ec.message()) +
                ": a leader cannot verify this node's claims, so it is never named successor "
                "(grant s3:GetObject and s3:PutObject on <lock_key>.candidates/*, "
                "docs/iam-policy.md)");
}

}  // namespace s3lect::inline v1
