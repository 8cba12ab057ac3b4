// The leader's candidates as the elector keeps them (docs/peer-mode.md#candidates): claims from
// the health endpoint into the registry, the verified ones to the core, and the registration
// reads that verify a claim. Those reads run on the strand beside the core's one operation,
// never in its slot, so verifying a claim can never delay a renewal; one at a time, at most one
// per F. This node's own registration is registration_upkeep.cpp's.
#include "candidate_registration.hpp"
#include "elector_impl.hpp"
#include "log_text.hpp"

#include <s3lect/error.hpp>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/post.hpp>

#include <algorithm>
#include <mutex>
#include <utility>

namespace s3lect::inline v1 {

namespace asio = boost::asio;
using boost::system::error_code;

namespace {

std::string_view verdict_name(detail::registration_verdict::kind outcome) {
  switch (outcome) {
    case detail::registration_verdict::kind::member:
      return "verified";
    case detail::registration_verdict::kind::not_member:
      return "refuted";
    case detail::registration_verdict::kind::unknown:
      return "unknown";
  }
  return "unknown";
}

/// " id/priority[/watching]" per candidate.
std::string describe(const std::vector<detail::candidate>& list) {
  std::string text;
  for (const detail::candidate& c : list) {
    text += " " + log_text::value(c.id) + "/" + std::to_string(c.priority);
    if (c.watching) text += "/watching";
  }
  return list.empty() ? " none" : text;
}

}  // namespace

void elector::impl::note_candidate(const candidate_claim& claim) {
  candidates.note(claim, clock.now());
  // Coalesced: a burst of claims costs one pass of the loop.
  if (candidate_work.refresh_posted.exchange(true)) return;
  asio::post(strand, [self = shared_from_this()] { self->refresh_candidates(); });
}

bool elector::impl::knows_successor(const std::string& id) const {
  if (id.empty()) return true;
  {
    const std::lock_guard lock(config_mutex);
    if (id == config_snapshot.server_id) return true;
  }
  const std::vector<detail::candidate> list = candidates.verified(clock.now());
  return std::any_of(list.begin(), list.end(),
                     [&id](const detail::candidate& c) { return c.id == id; });
}

void elector::impl::reset_candidates(bool leading) {
  candidates.reset(leading);
  if (!leading) {
    candidate_work.verify_timer.cancel();
    candidate_work.refresh_timer.cancel();
  }
  refresh_candidates();
}

void elector::impl::refresh_candidates() {
  candidate_work.refresh_posted = false;
  std::vector<detail::candidate> list = candidates.verified(clock.now());
  if (list != candidate_work.pushed) {
    if (core.config().log.enabled(log_level::trace)) {
      log(log_level::trace, "verified candidates given to the core:" + describe(list));
    }
    candidate_work.pushed = list;
    // A stopped loop gets none: the next run starts with no candidates anyway.
    if (loop.running) push(detail::candidates_changed{std::move(list)});
  }
  schedule_refresh();
  schedule_verification();
}

// A candidate whose watch ended and who never came back stops counting as watching when its gap
// runs out, with no claim to say so: a timer refreshes the core's list then.
void elector::impl::schedule_refresh() {
  const std::optional<detail::steady_time> at = candidates.next_change_at(clock.now());
  if (!at) return;
  candidate_work.refresh_timer.expires_at(*at);
  // Holds no reference: a destroyed elector just drops the wake-up.
  candidate_work.refresh_timer.async_wait([weak = weak_from_this()](const error_code& ec) {
    if (ec) return;
    if (auto self = weak.lock()) self->refresh_candidates();
  });
}

void elector::impl::schedule_verification() {
  const auto now = clock.now();
  if (auto checked = candidates.next_verification(now)) {
    asio::co_spawn(strand, run_verification(shared_from_this(), std::move(*checked)),
                   asio::detached);
    return;
  }
  const std::optional<detail::steady_time> at = candidates.next_verification_at(now);
  if (!at) return;
  candidate_work.verify_timer.expires_at(*at);
  // Holds no reference: a destroyed elector just drops the wake-up.
  candidate_work.verify_timer.async_wait([weak = weak_from_this()](const error_code& ec) {
    if (ec) return;
    if (auto self = weak.lock()) self->schedule_verification();
  });
}

asio::awaitable<void> elector::impl::run_verification(std::shared_ptr<impl> self,
                                                      detail::candidate_verification checked) {
  const elector_config config = self->core.config();
  const std::string key = detail::registration_key(config.lock_key, checked.id);
  auto [ec, result] = co_await read_attempt(self, key, config.request_timeout);
  detail::registration_verdict verdict;
  if (!ec) {
    std::optional<std::string> body;
    if (result.found) body = std::move(result.found->body);
    verdict = detail::judge_registration(body, checked);
  }
  self->candidates.verification_done(checked, verdict, self->clock.now());
  // The id is the claimant's, the token never shown.
  self->log(log_level::debug, "candidate claim candidate=" + log_text::value(checked.id) +
                                  " claimed_priority=" + std::to_string(checked.claimed_priority) +
                                  " registration=" + std::string(verdict_name(verdict.outcome)));
  self->refresh_candidates();
}

}  // namespace s3lect::inline v1
