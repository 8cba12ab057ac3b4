#include "cli/race_probe.hpp"

#include <s3lect/error.hpp>

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>

#include <memory>
#include <optional>
#include <random>
#include <utility>

namespace s3lect::cli {
namespace {

namespace asio = boost::asio;
using boost::system::error_code;

/// The answers of one race, filled in by the writers' handlers as they complete.
struct race_answers {
  std::vector<std::optional<std::pair<error_code, put_result>>> answers;
  std::size_t pending = 0;
  asio::steady_timer all_done;

  race_answers(asio::any_io_executor executor, std::size_t writers)
      : answers(writers),
        pending(writers),
        all_done(executor, asio::steady_timer::time_point::max()) {}
};

std::string nonce() {
  std::random_device device;
  return std::to_string(device()) + std::to_string(device());
}

/// Starts every writer's conditional PUT at once and waits until all have answered (each is
/// bounded by its storage's request timeout).
asio::awaitable<std::shared_ptr<race_answers>> race(std::vector<storage*> writers, std::string key,
                                                    std::vector<std::string> bodies,
                                                    put_condition condition) {
  auto state = std::make_shared<race_answers>(co_await asio::this_coro::executor, writers.size());
  for (std::size_t i = 0; i < writers.size(); ++i) {
    writers[i]->async_put(key, bodies[i], condition, [state, i](error_code ec, put_result result) {
      state->answers[i].emplace(ec, std::move(result));
      if (--state->pending == 0) state->all_done.cancel();
    });
  }
  if (state->pending != 0) co_await state->all_done.async_wait(asio::as_tuple(asio::use_awaitable));
  co_return state;
}

std::string answer_name(const put_result& result) {
  return result.info.http_status == 0 ? "no answer" : std::to_string(result.info.http_status);
}

/// Judges one race from the answers and the object read after it.
race_result judge(const race_answers& race, const std::vector<std::string>& bodies,
                  const object& stored, race_findings& findings) {
  race_result result;
  for (std::size_t i = 0; i < bodies.size(); ++i) {
    const auto& [ec, answer] = *race.answers[i];
    const bool stored_here = stored.body == bodies[i];
    if (ec == errc::precondition_failed && stored_here) {
      result.problem = "a write refused with HTTP " + answer_name(answer) + " took effect";
    }
    if (!ec || stored_here) {
      ++result.winners;
      if (ec) ++findings.other_answers[answer_name(answer) + " (then found written)"];
      continue;
    }
    ++findings.other_answers[answer_name(answer)];
    if (ec == errc::precondition_failed) {
      ++result.refused;
    } else {
      ++result.unresolved;
    }
  }
  if (result.winners > 1 && result.problem.empty()) {
    result.problem =
        std::to_string(result.winners) + " of " + std::to_string(bodies.size()) + " writers won";
  }
  return result;
}

/// One race on `key` and the re-read that settles it. Returns the stored object, or nullopt
/// when the race could not be settled (`findings.store_error` says why).
asio::awaitable<std::optional<object>> settle(std::vector<storage*> writers, storage& reader,
                                              std::string key, put_condition condition,
                                              race_result& result, race_findings& findings) {
  std::vector<std::string> bodies;
  const std::string run = nonce();
  for (std::size_t i = 0; i < writers.size(); ++i) {
    bodies.push_back(R"({"probe":"race","writer":)" + std::to_string(i) + R"(,"nonce":")" + run +
                     "\"}");
  }
  auto answers = co_await race(writers, key, bodies, std::move(condition));
  auto [read_ec, read] = co_await reader.async_get(key, asio::as_tuple(asio::use_awaitable));
  if (read_ec || !read.found) {
    findings.store_error = "re-read after a race: " +
                           (read_ec ? read_ec.message() : std::string("no object at the key"));
    co_return std::nullopt;
  }
  result = judge(*answers, bodies, *read.found, findings);
  if (result.winners == 0) {
    findings.store_error = "no writer's write is in the store after a race";
    co_return std::nullopt;
  }
  co_return std::move(read.found);
}

/// The winners of each round as " C/R", a run of equal rounds written once: " 1/1 x10".
std::string winners_per_round(const race_findings& findings) {
  std::string text;
  std::size_t i = 0;
  while (i < findings.rounds.size()) {
    const auto& round = findings.rounds[i];
    std::size_t repeats = 1;
    while (i + repeats < findings.rounds.size() &&
           findings.rounds[i + repeats].create.winners == round.create.winners &&
           findings.rounds[i + repeats].replace.winners == round.replace.winners) {
      ++repeats;
    }
    text +=
        " " + std::to_string(round.create.winners) + "/" + std::to_string(round.replace.winners);
    if (repeats > 1) text += " x" + std::to_string(repeats);
    i += repeats;
  }
  return text;
}

}  // namespace

asio::awaitable<race_findings> run_races(std::vector<storage*> writers, storage& reader,
                                         std::string key_prefix, int rounds) {
  race_findings findings;
  for (int round = 1; round <= rounds; ++round) {
    const std::string key = key_prefix + "-" + std::to_string(round);
    findings.keys.push_back(key);
    race_round outcome;
    const auto absent = put_condition::absent();
    auto created = co_await settle(writers, reader, key, absent, outcome.create, findings);
    if (!created) break;
    const auto matches = put_condition::matches(created->etag);
    auto replaced = co_await settle(writers, reader, key, matches, outcome.replace, findings);
    findings.rounds.push_back(outcome);
    const std::string& problem =
        !outcome.create.problem.empty() ? outcome.create.problem : outcome.replace.problem;
    const char* which = !outcome.create.problem.empty() ? "create-if-absent" : "If-Match";
    if (!problem.empty()) {
      findings.unsafe_reason =
          "races: round " + std::to_string(round) + " " + which + ": " + problem;
      break;
    }
    if (!replaced) break;
  }
  co_return findings;
}

std::vector<std::string> describe_races(const race_findings& findings, int writers) {
  std::vector<std::string> lines;
  const std::string per_round = winners_per_round(findings);
  const std::string count = std::to_string(findings.rounds.size());
  if (!findings.rounds.empty()) {
    lines.push_back("  info  race winners per round (create-if-absent/If-Match):" + per_round);
  }
  std::string answers;
  for (const auto& [name, times] : findings.other_answers) {
    answers += (answers.empty() ? " " : ", ") + name + " x" + std::to_string(times);
  }
  if (!answers.empty()) lines.push_back("  info  race answers other than success:" + answers);
  if (!findings.unsafe_reason.empty()) {
    lines.push_back("  FAIL  " + findings.unsafe_reason + ": the store lets racing writers win");
  } else if (findings.store_error.empty()) {
    lines.push_back("  ok    races: " + std::to_string(writers) + " writers, " + count +
                    " rounds of create-if-absent then If-Match: one winner in every race");
  }
  return lines;
}

}  // namespace s3lect::cli
