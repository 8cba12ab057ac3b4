// A randomised property test of election_core: several cores share a simulated store that
// honours conditions, behind a scheduler that delivers results with random delays, lost replies,
// writes that land after their timeout, 5xx after a commit, 409s, outages, partitions of single
// nodes, crashes, restarts with the same id, resignations and stops, skewed and drifting clocks.
// Asserted: no two cores ever report leadership at overlapping times, gained terms strictly
// increase, terms in the store never go back, one operation per core at a time, no timer spin,
// and with a healthy store a leader is elected. SIM_TRACE=1 prints every core's log lines with
// the simulated time in milliseconds.
#include "election_core_harness.hpp"

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <map>
#include <memory>
#include <queue>
#include <random>
#include <sstream>

namespace s3lect::test {
namespace {

using boost::system::error_code;
using std::chrono::nanoseconds;

// ---------------------------------------------------------------------------------------------
// The store: one key, conditional writes, unique ETags.

struct fake_store {
  std::optional<object> current;
  std::uint64_t versions = 0;
  std::uint64_t stored_term = 0;
  std::string stored_holder;
  bool stored_released = true;
  std::vector<std::string> violations;

  // Applies a conditional write atomically; returns the new ETag or nullopt on 412.
  std::optional<std::string> put(const std::string& body, const put_condition& condition,
                                 wall_time now) {
    const bool holds = condition.type == put_condition::kind::if_absent
                           ? !current
                           : current && current->etag == condition.etag;
    if (!holds) return std::nullopt;
    const record_decoding decoded = decode_record(body, now);
    if (decoded.record) {
      const lock_record& r = *decoded.record;
      if (r.term < stored_term) violations.push_back("store term went back");
      const bool new_holder = stored_released || r.leader_id != stored_holder;
      if (new_holder && !r.released && r.term <= stored_term && current) {
        violations.push_back("a change of holder without a new term");
      }
      stored_term = std::max(stored_term, r.term);
      stored_holder = r.leader_id;
      stored_released = r.released;
    }
    current = object{body, "v" + std::to_string(++versions)};
    return current->etag;
  }
};

// ---------------------------------------------------------------------------------------------
// The world: nodes, the event queue in real (simulated) time, and the checks.

enum class store_state { healthy, failing, hanging };

struct operation {
  storage_request request;
  bool replied = false;
  // Filled when the request reaches the store.
  bool reached = false;
  std::optional<object> read_value;
  std::optional<std::string> new_etag;  // write: set on success, nullopt on 412
};

struct node {
  std::string id;
  elector_config config;
  std::unique_ptr<election_core> core;
  int incarnation = 0;
  bool alive = true;
  bool running = false;
  bool partitioned = false;
  nanoseconds steady_offset{0};
  nanoseconds wall_offset{0};
  double rate = 1.0;
  std::shared_ptr<operation> op;
  std::uint64_t timer_generation = 0;
  bool leader = false;
  nanoseconds leader_since{0};
};

class world {
 public:
  world(unsigned seed, bool rule_c, bool mixed_configs) : rng_(seed) {
    const int count = 3 + static_cast<int>(rng_() % 3);
    for (int i = 0; i < count; ++i) {
      node n;
      n.id = "n" + std::to_string(i % 3 == 2 ? 1 : i);  // sometimes two nodes share an id
      n.config = pick_config(mixed_configs ? rng_() % 3 : seed % 3);
      if (!rule_c) n.config.max_clock_skew.reset();
      n.steady_offset = std::chrono::hours{1 + rng_() % 1000};
      // Pairwise skew within max_clock_skew (2 s) when rule (c) is on; anything otherwise.
      n.wall_offset =
          rule_c ? uniform(-999ms, 999ms) : uniform(-std::chrono::hours{2}, std::chrono::hours{2});
      n.rate = 1.0 + (static_cast<double>(rng_() % 101) - 50.0) * 1e-6;  // ±50 ppm drift
      nodes_.push_back(std::move(n));
    }
  }

  void run(nanoseconds chaos, nanoseconds calm) {
    for (std::size_t i = 0; i < nodes_.size(); ++i) {
      at(uniform(0ms, 3000ms), [this, i] { restart(i, true); });
    }
    schedule_chaos(chaos);
    while (!queue_.empty() && queue_.top().when <= chaos + calm) {
      auto event = queue_.top();
      queue_.pop();
      now_ = event.when;
      calm_ = now_ >= chaos;
      if (event.chaos && calm_) continue;
      event.action();
      if (::testing::Test::HasFatalFailure()) return;
    }
  }

  // Called once the run ended: a healthy store and live nodes must have produced a leader.
  void check_liveness() const {
    int leaders = 0;
    for (const node& n : nodes_) leaders += n.leader ? 1 : 0;
    EXPECT_EQ(leaders, 1) << "after the calm period exactly one leader" << dump();
    EXPECT_GT(gains_, 0u);
  }

  std::string dump() const {
    std::ostringstream out;
    out << "\nstore: "
        << (store_.current ? store_.current->body + " " + store_.current->etag : "absent");
    for (const node& n : nodes_) {
      const auto st = n.core ? n.core->status() : detail::core_status{};
      out << "\n"
          << n.id << " alive=" << n.alive << " running=" << n.running << " part=" << n.partitioned
          << " role=" << static_cast<int>(st.role) << " op=" << (n.op != nullptr)
          << " leader=" << st.leader_id << " etag=" << st.etag
          << " mode=" << static_cast<int>(st.mode) << " err=" << st.last_error;
    }
    return out.str();
  }
  const std::vector<std::string>& violations() const { return store_.violations; }
  std::uint64_t gains() const { return gains_; }

 private:
  struct event {
    nanoseconds when;
    std::uint64_t seq;
    bool chaos;
    std::function<void()> action;
    bool operator<(const event& other) const {
      return when != other.when ? when > other.when : seq > other.seq;
    }
  };

  elector_config pick_config(unsigned which) {
    elector_config config = core_config("x");
    if (which == 1) config.acquire_grace = 3s;
    if (which == 2) {
      config.lease = 9s;
      config.renew_deadline = 6s;
      config.frequent_interval = 2s;
      config.infrequent_interval = 12s;
      config.retry.delays = {50ms, 200ms};
    }
    EXPECT_EQ(config.validate(), std::nullopt);
    return config;
  }

  template <class Duration>
  nanoseconds uniform(Duration low, Duration high) {
    const auto lo = std::chrono::duration_cast<nanoseconds>(low).count();
    const auto hi = std::chrono::duration_cast<nanoseconds>(high).count();
    return nanoseconds{lo +
                       static_cast<std::int64_t>(rng_() % static_cast<std::uint64_t>(hi - lo + 1))};
  }
  bool chance(double p) { return std::uniform_real_distribution<double>(0, 1)(rng_) < p; }

  void at(nanoseconds when, std::function<void()> action, bool chaos = false) {
    queue_.push(event{std::max(when, now_), seq_++, chaos, std::move(action)});
  }

  // A node's clocks at real time `t`.
  instant local(const node& n, nanoseconds t) const {
    const auto scaled = nanoseconds{
        static_cast<std::int64_t>(std::llround(static_cast<double>(t.count()) * n.rate))};
    return {steady_time{} + n.steady_offset + scaled, test_wall_epoch() + n.wall_offset + scaled};
  }
  // The first real time at which the node's steady clock reads `when`.
  nanoseconds real(const node& n, steady_time when) const {
    const auto local_elapsed = (when - steady_time{} - n.steady_offset).count();
    auto t = nanoseconds{
        static_cast<std::int64_t>(std::ceil(static_cast<double>(local_elapsed) / n.rate))};
    while (local(n, t).steady < when) t += nanoseconds{1};
    return t;
  }

  // --- chaos: outages, partitions, crashes, stops, resignations --------------------------------

  void schedule_chaos(nanoseconds until) {
    for (nanoseconds t = uniform(5s, 40s); t < until; t += uniform(5s, 60s)) {
      const unsigned what = rng_() % 7;
      const std::size_t i = rng_() % nodes_.size();
      const nanoseconds length = uniform(1s, 25s);
      switch (what) {
        case 0:
        case 1:
          at(
              t, [this, what] { state_ = what == 0 ? store_state::failing : store_state::hanging; },
              true);
          at(t + length, [this] { state_ = store_state::healthy; });
          break;
        case 2:
          at(
              t, [this, i] { nodes_[i].partitioned = true; }, true);
          at(t + length, [this, i] { nodes_[i].partitioned = false; });
          break;
        case 3:
          at(
              t, [this, i] { crash(i); }, true);
          at(t + length, [this, i] { restart(i, true); });
          break;
        case 4:
          at(
              t, [this, i] { stop(i); }, true);
          at(t + length, [this, i] { restart(i, chance(0.5)); });
          break;
        case 5:
          at(
              t,
              [this, i] {
                node& n = nodes_[i];
                if (n.alive && n.running) {
                  apply(i, n.core->resign(local(n, now_),
                                          std::chrono::duration_cast<std::chrono::milliseconds>(
                                              uniform(0s, 20s))));
                }
              },
              true);
          break;
        default:
          break;  // quiet
      }
    }
  }

  void crash(std::size_t i) {
    node& n = nodes_[i];
    if (!n.alive) return;
    n.leader = false;  // a dead process does no leader work
    n.alive = false;
    n.running = false;
    ++n.incarnation;  // its replies and timers are dropped; requests on the wire still land
    n.op.reset();
  }

  void stop(std::size_t i) {
    node& n = nodes_[i];
    if (n.alive && n.running) apply(i, n.core->stop(local(n, now_)));
  }

  void restart(std::size_t i, bool fresh) {
    node& n = nodes_[i];
    const bool stopping = n.alive && n.running && n.core->role() == core_role::stopping;
    if (n.alive && n.running && !stopping) return;
    if (stopping || n.op) {  // a stop still releasing: try again later
      at(now_ + 1s, [this, i, fresh] { restart(i, fresh); });
      return;
    }
    if (fresh || !n.core) {
      ++n.incarnation;
      n.core = std::make_unique<election_core>(with_id(n.config, n.id));
      n.op.reset();
      n.leader = false;
    }
    n.alive = true;
    n.running = true;
    apply(i, n.core->start(local(n, now_)));
  }

  elector_config with_id(elector_config config, const std::string& id) {
    config.server_id = id;
    config.server_address = id + ".local:8443";
    if (std::getenv("SIM_TRACE")) {
      config.log.level = log_level::debug;
      config.log.sink = [this, id](log_level, std::string_view line) {
        std::printf("%8lld %s %.*s\n", static_cast<long long>(now_.count() / 1'000'000), id.c_str(),
                    static_cast<int>(line.size()), line.data());
      };
    }
    return config;
  }

  // --- the coroutine layer, simulated ----------------------------------------------------------

  void apply(std::size_t i, step s) {
    node& n = nodes_[i];
    const instant here = local(n, now_);
    if (s.wake_at) {
      ASSERT_GT(*s.wake_at, here.steady) << n.id << ": timer would spin";
    }
    if (s.cancel_operation) {
      ASSERT_TRUE(n.op) << n.id << ": cancel without an operation";
      reply_later(i, n.op, now_ + 1ms, boost::asio::error::operation_aborted);
    }
    for (const core_notice& notice : s.notices) {
      if (const auto* gained = std::get_if<leadership_gained>(&notice)) on_gained(i, *gained);
      if (std::get_if<leadership_lost>(&notice)) n.leader = false;
      if (std::get_if<detail::core_stopped>(&notice)) n.running = false;
    }
    if (s.operation) {
      ASSERT_FALSE(n.op) << n.id << ": a second operation while one is in flight";
      start_operation(i, std::move(*s.operation));
    }
    ++n.timer_generation;
    if (s.wake_at) {
      const std::uint64_t generation = n.timer_generation;
      const int incarnation = n.incarnation;
      at(real(n, *s.wake_at), [this, i, generation, incarnation] {
        node& m = nodes_[i];
        if (m.incarnation != incarnation || m.timer_generation != generation || !m.alive) return;
        apply(i, m.core->on_timer(local(m, now_)));
      });
    }
    EXPECT_EQ(n.core->is_leader(), n.leader) << n.id;
  }

  void on_gained(std::size_t i, const leadership_gained& gained) {
    node& n = nodes_[i];
    for (std::size_t k = 0; k < nodes_.size(); ++k) {
      if (k != i && nodes_[k].leader) {
        ADD_FAILURE() << "two leaders at t=" << now_.count() / 1'000'000 << "ms: node " << i << " ("
                      << n.id << ", term " << gained.term << ") and node " << k << " ("
                      << nodes_[k].id << ", since " << nodes_[k].leader_since.count() / 1'000'000
                      << "ms)";
      }
    }
    EXPECT_GT(gained.term, last_gained_term_) << "terms strictly increase";
    last_gained_term_ = std::max(last_gained_term_, gained.term);
    n.leader = true;
    n.leader_since = now_;
    ++gains_;
  }

  void start_operation(std::size_t i, storage_request request) {
    node& n = nodes_[i];
    auto op = std::make_shared<operation>();
    op->request = std::move(request);
    n.op = op;
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
    const nanoseconds reach = now_ + uniform(1ms, 400ms);
    const double fault = calm_ ? 0.0 : 1.0;  // the calm period checks liveness: no faults
    if (chance(0.03 *
               fault)) {  // lost reply, or a request stuck until its timeout that lands later
      reach_store(op, chance(0.5) ? reach : now_ + worst + uniform(0ms, 3000ms));
      reply_later(i, op, now_ + worst, unknown);
      return;
    }
    if (is_write && chance(0.02 * fault)) {  // 409: undecided, nothing written
      reply_later(i, op, reach, errc::conflict);
      return;
    }
    reach_store(op, reach);
    const nanoseconds answer = reach + uniform(1ms, 400ms);
    const bool garble =
        is_write && chance(0.05 * fault);  // 500 after the fact (Ceph's 500-for-412 too)
    const int incarnation = n.incarnation;
    at(answer, [this, i, op, incarnation, garble] {
      if (nodes_[i].incarnation != incarnation) return;
      if (garble) return deliver(i, op, errc::server_error);
      if (op->request.type == storage_request::kind::write && !op->new_etag) {
        return deliver(i, op, errc::precondition_failed);
      }
      deliver(i, op, {});
    });
  }

  void reach_store(const std::shared_ptr<operation>& op, nanoseconds when) {
    at(when, [this, op] {
      op->reached = true;
      if (op->request.type == storage_request::kind::read) {
        op->read_value = store_.current;
      } else {
        op->new_etag =
            store_.put(op->request.body, op->request.condition, test_wall_epoch() + now_);
      }
    });
  }

  void reply_later(std::size_t i, const std::shared_ptr<operation>& op, nanoseconds when,
                   error_code ec) {
    const int incarnation = nodes_[i].incarnation;
    at(when, [this, i, op, incarnation, ec] {
      if (nodes_[i].incarnation == incarnation) deliver(i, op, ec);
    });
  }

  void deliver(std::size_t i, const std::shared_ptr<operation>& op, error_code ec) {
    node& n = nodes_[i];
    if (op->replied || n.op != op) return;
    op->replied = true;
    n.op.reset();
    const instant here = local(n, now_);
    if (op->request.type == storage_request::kind::read) {
      get_result result;
      if (!ec) result.found = op->read_value;
      apply(i, n.core->on_read_done(here, ec, result));
    } else {
      put_result result;
      if (!ec) result.etag = *op->new_etag;
      apply(i, n.core->on_write_done(here, ec, result));
    }
  }

  std::mt19937_64 rng_;
  std::vector<node> nodes_;
  fake_store store_;
  store_state state_ = store_state::healthy;
  bool calm_ = false;
  std::priority_queue<event> queue_;
  std::uint64_t seq_ = 0;
  nanoseconds now_{0};
  std::uint64_t last_gained_term_ = 0;
  std::uint64_t gains_ = 0;
};

// Seeds per test: enough to hit rare interleavings, few enough to stay quick under ASan.
constexpr unsigned seeds = 30;

void run_seeds(bool rule_c, bool mixed_configs, unsigned first_seed) {
  std::uint64_t total_gains = 0;
  for (unsigned seed = first_seed; seed < first_seed + seeds; ++seed) {
    SCOPED_TRACE("seed " + std::to_string(seed));
    world w(seed, rule_c, mixed_configs);
    w.run(std::chrono::minutes{20}, std::chrono::minutes{2});
    if (::testing::Test::HasFatalFailure()) return;
    EXPECT_TRUE(w.violations().empty()) << w.violations().front();
    w.check_liveness();
    total_gains += w.gains();
  }
  EXPECT_GT(total_gains, seeds * 5u) << "the chaos should cause many elections";
}

TEST(ElectionCoreSimulation, NoOverlappingLeadershipWithClocksWithinSkew) {
  run_seeds(true, false, 1);
}

TEST(ElectionCoreSimulation, NoOverlappingLeadershipWithMixedConfigs) {
  run_seeds(true, true, 1001);
}

TEST(ElectionCoreSimulation, NoOverlappingLeadershipWithoutRuleCWhateverTheWallClocks) {
  run_seeds(false, true, 2001);
}

}  // namespace
}  // namespace s3lect::test
