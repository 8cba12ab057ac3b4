#include "supervision/slot_supervisor.hpp"

#include "cli/exit_codes.hpp"

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/experimental/awaitable_operators.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>

#include <optional>
#include <utility>
#include <variant>

namespace s3lect::cli {

namespace asio = boost::asio;
using namespace asio::experimental::awaitable_operators;
using steady = std::chrono::steady_clock;

namespace {

/// The first slot won in one round of campaigning; `wake` is cancelled to tell the waiter.
struct slot_race {
  explicit slot_race(asio::any_io_executor executor) : wake(std::move(executor)) {}
  std::optional<std::pair<unsigned, leadership_lease>> winner;
  asio::steady_timer wake;
};

/// Waits for `election` to lead and reports it as the winner, unless another slot won first
/// (then the round's waiter stops this elector, releasing the lock). The race is shared: the
/// waiter may be gone when a stopped elector completes this wait.
asio::awaitable<void> watch_slot(elector& election, unsigned slot,
                                 std::shared_ptr<slot_race> race) {
  const auto token = asio::as_tuple(asio::use_awaitable);
  auto [error, lease] = co_await election.async_wait_for_leadership(token);
  if (error || race->winner) co_return;
  race->winner.emplace(slot, lease);
  race->wake.cancel();
}

/// Stops campaigning for every slot but `keep` (all when nullopt); a lock held is released.
asio::awaitable<void> stop_slots(slot_supervisors& slots, std::optional<unsigned> keep) {
  const auto token = asio::as_tuple(asio::use_awaitable);
  for (unsigned slot = 0; slot < slots.size(); ++slot) {
    if (keep != slot) co_await slots[slot]->election.async_stop(token);
  }
}

/// Ends a round of waiting that no slot won: a stop signal (`signal`) or --timeout (none).
/// Stops campaigning for every slot; returns s3lect's exit code.
asio::awaitable<int> stop_waiting(slot_supervisors& slots, std::optional<int> signal,
                                  steady::time_point started) {
  const log_output& log = slots.front()->node_log ? *slots.front()->node_log : slots.front()->log;
  if (!signal) {
    log.log(log_level::warning, "not elected in time: giving up",
            {{"waited_ms", ms_since(started)}});
    co_await stop_slots(slots, std::nullopt);
    co_return exit_timeout;
  }
  log.log(log_level::info, "stopping", {{"signal", signal_name(*signal)}});
  co_await stop_slots(slots, std::nullopt);
  log.log(log_level::info, "stopped campaigning");
  co_return exit_ok;
}

/// One round: campaigns for every slot until one is won (the others are then stopped), a stop
/// signal comes or --timeout passes. Returns the slot and its lease, or s3lect's exit code.
asio::awaitable<std::variant<std::pair<unsigned, leadership_lease>, int>> await_any_slot(
    slot_supervisors& slots) {
  const auto executor = co_await asio::this_coro::executor;
  const auto started = steady::now();
  auto race = std::make_shared<slot_race>(executor);
  for (unsigned slot = 0; slot < slots.size(); ++slot) {
    slots[slot]->election.start();
    asio::co_spawn(executor, watch_slot(slots[slot]->election, slot, race), asio::detached);
  }
  asio::steady_timer give_up(executor);
  give_up.expires_at(slots.front()->give_up_at.value_or(steady::time_point::max()));
  const auto token = asio::as_tuple(asio::use_awaitable);
  while (!race->winner) {
    race->wake.expires_at(steady::time_point::max());
    auto event = co_await (race->wake.async_wait(token) || slots.front()->signals.wait() ||
                           give_up.async_wait(asio::use_awaitable));
    // A stop signal counts whatever else completed in the same turn (a slot won meanwhile is
    // released by the stop).
    if (const auto signal = take_signals(*slots.front())) {
      co_return co_await stop_waiting(slots, signal, started);
    }
    if (event.index() == 2) co_return co_await stop_waiting(slots, std::nullopt, started);
  }
  const auto [slot, lease] = *race->winner;
  co_await stop_slots(slots, slot);
  slots.front()->give_up_at.reset();
  slots[slot]->log.log(log_level::info, "became leader",
                       {{"slot", slot}, {"term", lease.term}, {"after_ms", ms_since(started)}});
  co_return std::make_pair(slot, lease);
}

asio::awaitable<int> supervise_slots(slot_supervisors& slots) {
  for (;;) {
    auto won = co_await await_any_slot(slots);
    if (won.index() == 1) co_return std::get<1>(won);
    const auto [slot, lease] = std::get<0>(won);
    const std::optional<int> code = co_await lead(*slots[slot], lease);
    if (code) co_return *code;
  }
}

}  // namespace

std::vector<std::unique_ptr<log_output>> slot_log_outputs(const log_output& node_output,
                                                          const run_options& options) {
  std::vector<std::unique_ptr<log_output>> outputs;
  for (unsigned slot = 0; slot < options.extras.slots; ++slot) {
    std::vector<log_field> context = node_output.context();
    for (log_field& field : context) {
      if (field.key == "lock") field.value = slot_key(options.store.url(), slot);
    }
    outputs.push_back(std::make_unique<log_output>(node_output.format(), options.elector.level,
                                                   std::move(context)));
  }
  return outputs;
}

asio::awaitable<int> supervise_slots_and_stop(slot_supervisors& slots) {
  const int code = co_await supervise_slots(slots);
  co_await stop_servers(*slots.front());
  co_return code;
}

}  // namespace s3lect::cli
