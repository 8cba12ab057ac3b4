// The world of the election simulation: nodes running election_core, the store, the network
// between them, the leaders' health endpoints, and the faults, in real (simulated) time driven
// by one event queue. Everything random comes from the seed. Included by
// election_core_simulation_test.cpp only.
//
// A node's clocks:
// - boot (instant.steady): counts real time at the node's rate (±50 ppm), also while the node
//   is suspended, as CLOCK_BOOTTIME does; in the negative control it stops during a suspend, as
//   CLOCK_MONOTONIC would.
// - wall (instant.wall): anywhere within ±15 min of true time (the store's clock is up to an
//   hour off true time too), and stepped forward and back by seconds to minutes during the run.
//   It only stamps lastUpdated: nothing may depend on it.
// A suspended node processes nothing: replies, timers and peer requests that reach it wait and
// are delivered in order when it wakes; its health endpoint answers nobody meanwhile. Requests
// it sent before go on and land. A suspend freezes the whole machine: the s3lect process, its
// guardian and its job. A process freeze stops only the s3lect process (its core and its health
// endpoint); the guardian and the job run on. A crash kills the s3lect process (its guardian
// kills the job and may release the lock: support/simulation/guardian.hpp) or the whole
// machine (job and guardian die with it).
//
// The class is defined here; its member functions for the faults, the coroutine layer, the
// health endpoints and the guardians are defined in election_core_simulation_{faults,layer,
// endpoint,guardian}.hpp, which the test includes.
#pragma once

#include "support/simulation/checker.hpp"
#include "support/simulation/coordination.hpp"
#include "support/simulation/jobs.hpp"
#include "support/simulation/store.hpp"

#include <algorithm>
#include <cmath>
#include <functional>
#include <map>
#include <memory>
#include <queue>
#include <random>
#include <sstream>
#include <utility>

namespace s3lect::test::simulation {

using boost::system::error_code;
using std::chrono::milliseconds;

/// What a run simulates; the world draws everything else from its seed.
struct scenario {
  bool rule_c = true;          ///< Nodes set max_clock_skew (with mixed configs, most do).
  bool mixed_configs = false;  ///< Each node draws its own timing and max_clock_skew.
  bool peer_mode = false;      ///< Stable followers check the leader's health endpoint.
  /// S3 mode: every node reads on the economy schedule (F, then I once settled), not every F / 2.
  /// With mixed configs, some nodes do anyway.
  bool economy_reads = false;
  /// In peer mode: every node watches, and every endpoint is s3lect's (full).
  bool every_node_watches = false;
  /// The boot clock counts a suspend (CLOCK_BOOTTIME). False only in the negative control.
  bool boot_clock_counts_suspend = true;
  /// The first node's wall clock is 400 days ahead of everyone else's.
  bool a_wall_clock_a_year_ahead = false;
  /// Negative control: s3lect tells its guardian "leading until S + D + (L − D)" instead of
  /// S + D, so that a job outlives the lease.
  bool guardian_deadline_a_lease_late = false;
  /// Negative control: the guardian releases a dead process's lock whatever record it finds
  /// (unless released), without comparing its nonce and term with the last write s3lect reported.
  bool guardian_releases_unchecked = false;
  /// Each node draws a priority 0..3; a leader's watching followers are its verified candidates;
  /// resignations sometimes name a node (support/simulation/coordination.hpp).
  bool coordinated = false;
  /// Two more faults (support/simulation/faults.hpp): a stop of s3lect's whole process group,
  /// and a job that stops its own guardian (SIGSTOP) while s3lect runs.
  bool guardian_attacks = false;
  /// Negative control: the guardian is in s3lect's process group, so that a stop of the group
  /// stops the guardian too (as before issue 35).
  bool guardian_in_s3lects_group = false;
  /// Negative control: s3lect neither resumes a stopped guardian nor ends the job's tree
  /// itself when the guardian does not answer: a stop waits for the guardian for ever.
  bool stop_waits_for_a_stopped_guardian = false;
};

enum class store_state { healthy, failing, hanging };

/// What a node's health endpoint implements, when it leads (peer mode).
enum class endpoint_kind {
  full,        ///< s3lect: watches, write serial, writeAgeMs.
  no_age,      ///< An older s3lect: watches and serial, no writeAgeMs.
  plain_only,  ///< A Go leader: answers at once, no serial, no age, ignores watch parameters.
};

struct operation {
  storage_request request;
  process_id sender;
  steady_time sent;  ///< The sender's boot clock when it started the operation.
  /// A write on If-Match: the sender's earliest evidence of when the replaced record was
  /// written (its first read of the ETag, or a leader's report of that write): rule (b).
  std::optional<steady_time> evidence;
  /// An acquisition: why the core thought the record takeable ("acquiring reason=" in its log).
  std::string reason;
  bool replied = false;
  get_result read_value;
  std::string read_nonce;  // the nonce of the record read, as the store knows it
  std::optional<std::string> new_etag;
  /// Set for a guardian's request: its answer goes there instead of to the core.
  std::function<void(error_code, const operation&)> guardian;
  /// A guardian's released copy: when the s3lect process whose lock it releases died.
  std::optional<nanoseconds> crashed_at;
};

struct crash_release;  // support/simulation/guardian.hpp

/// A watch a leader's endpoint holds until its state changes or the watch time passes.
struct held_watch {
  std::size_t follower = 0;
  std::shared_ptr<operation> op;
};

/// A suspend the boot clock did not count (negative control).
struct freeze {
  nanoseconds from{0};
  nanoseconds to{0};
};

struct node {
  std::string id;
  std::string address;
  elector_config config;
  endpoint_kind endpoint = endpoint_kind::full;
  std::unique_ptr<election_core> core;
  int incarnation = 0;
  bool alive = true;
  bool machine_down = false;  // not alive because the whole machine crashed
  bool running = false;
  bool partitioned = false;
  nanoseconds steady_offset{0};
  nanoseconds wall_offset{0};
  double rate = 1.0;
  std::vector<freeze> freezes;
  bool suspended = false;
  nanoseconds suspended_since{0};
  std::uint64_t suspends = 0;
  // Its s3lect process is frozen (SIGSTOP, a long pause) while the machine runs on.
  bool frozen = false;
  nanoseconds frozen_since{0};
  std::uint64_t freezes_started = 0;
  std::vector<std::function<void()>> deferred;  // what reached its core while it could not run
  // The guardian of its s3lect process, and what reached it while the machine was suspended or
  // the guardian itself was stopped (a SIGSTOP from its job, or from a stop of the group it
  // shares with s3lect in the negative control).
  guardian_state guardian;
  bool guardian_stopped = false;
  std::vector<std::function<void()>> guardian_deferred;
  int machine = 0;  // a machine crash ends every guardian task of the machine
  std::shared_ptr<operation> op;
  std::string acquiring;  // the reason the core last logged for an acquisition
  std::uint64_t timer_generation = 0;
  bool leader = false;
  std::size_t period = 0;  // the checker's index of its current leadership
  // Its health endpoint: the write serial counts the leader's successful writes.
  std::uint64_t write_serial = 0;
  std::optional<steady_time> serial_of;
  std::vector<held_watch> watches;
  // Rule (b) evidence of this process: ETag -> (first read completion, nonce), and nonce ->
  // earliest "sent by" a leader reported for that write.
  std::map<std::string, std::pair<steady_time, std::string>> first_read;
  std::map<std::string, steady_time> told;
  // Its health endpoint after a release: the released record it names in its 404 answers
  // (one-round-trip handover), until it sees anyone lead again.
  std::optional<detail::peer_answer::released_record> released;
  // Coordinated: the candidates its core was last given, and since when each one watches.
  std::vector<detail::candidate> candidates;
  std::map<std::string, steady_time> watching_since;

  process_id process(std::size_t index) const { return {index, incarnation}; }
  std::string label(std::size_t index) const {
    return id + "@" + std::to_string(index) + "#" + std::to_string(incarnation);
  }
};

class world {
 public:
  world(std::uint64_t seed, scenario what)
      : rng_(seed),
        scenario_(what),
        checker_([this](std::size_t n, steady_time t) { return first_real(nodes_[n], t); },
                 timeline_),
        jobs_([this](nanoseconds t, const std::string& what) { checker_.violation(t, what); },
              timeline_) {
    const int count = 3 + static_cast<int>(rng_() % 3);
    std::optional<milliseconds> tightest_skew;
    for (int i = 0; i < count; ++i) {
      node n;
      n.id = "n" + std::to_string(i % 3 == 2 ? 1 : i);  // sometimes two processes share an id
      n.address = "p" + std::to_string(i) + ".local:8443";
      n.config = pick_config(what.mixed_configs ? rng_() % 3 : seed % 3);
      if (what.mixed_configs) {
        n.config.max_clock_skew = milliseconds{1000 * (1 + static_cast<int>(rng_() % 3))};
        if (chance(0.25)) n.config.max_clock_skew.reset();
      }
      if (!what.rule_c) n.config.max_clock_skew.reset();
      if (what.economy_reads || (what.mixed_configs && chance(0.3))) {
        n.config.s3_follower_reads = follower_reads::economy;
      }
      if (what.peer_mode) {
        n.config.peer.enabled = true;
        n.config.peer.watch = chance(0.6);
        const auto kind = rng_() % 6;
        n.endpoint = kind < 4   ? endpoint_kind::full
                     : kind < 5 ? endpoint_kind::no_age
                                : endpoint_kind::plain_only;
        if (what.every_node_watches) {
          n.config.peer.watch = true;
          n.endpoint = endpoint_kind::full;
        }
      }
      if (what.coordinated) n.config.coordination.priority = static_cast<int>(rng_() % 4);
      if (n.config.max_clock_skew) {
        tightest_skew =
            std::min(tightest_skew.value_or(*n.config.max_clock_skew), *n.config.max_clock_skew);
      }
      n.steady_offset = std::chrono::hours{1 + rng_() % 1000};
      n.wall_offset = uniform(-std::chrono::minutes{15}, std::chrono::minutes{15});
      if (what.a_wall_clock_a_year_ahead && i == 0) n.wall_offset += std::chrono::hours{24 * 400};
      n.rate = 1.0 + (static_cast<double>(rng_() % 101) - 50.0) * 1e-6;  // ±50 ppm drift
      // The kill grace G of `s3lect run`, which validates G < L − D: 5 % to 95 % of L − D.
      n.guardian.kill_grace =
          (n.config.lease - n.config.renew_deadline) * static_cast<int>(1 + rng_() % 19) / 20;
      nodes_.push_back(std::move(n));
    }
    // A slow store leaves room between a write and its first read; a fast one tests the rules
    // closer to their bounds.
    store_latency_ = chance(0.5) ? 400ms : 20ms;
    // The store's front ends disagree by up to max_clock_skew (the smallest any node assumes),
    // the first two by exactly that much.
    const bool dated = chance(0.8);
    const nanoseconds spread = tightest_skew.value_or(2s);
    std::vector<front_end> ends(1 + rng_() % 4);
    const bool truncate_all = chance(0.5);
    for (std::size_t e = 0; e < ends.size(); ++e) {
      ends[e].offset = e == 0 ? nanoseconds{0} : e == 1 ? spread : uniform(0s, spread);
      ends[e].mode = truncate_all ? rounding::truncate : static_cast<rounding>(rng_() % 3);
    }
    const bool one_undated = ends.size() > 1 && chance(0.2);
    if (one_undated) ends.back().dates = false;
    const nanoseconds base = uniform(-std::chrono::hours{1}, std::chrono::hours{1});
    store_.emplace(dated, base, std::move(ends),
                   [this](std::string what) { checker_.violation(now_, "store: " + what); });
    std::ostringstream about;
    about << "seed " << seed << ": " << nodes_.size() << " nodes, store "
          << (dated ? "dated" : "undated") << " by " << store_->front_ends() << " front end(s)"
          << (truncate_all ? " truncating" : " rounding variously")
          << (one_undated ? ", one not dating" : "") << ", latency up to " << in_ms(store_latency_);
    for (std::size_t i = 0; i < nodes_.size(); ++i) {
      const node& n = nodes_[i];
      about << "; " << n.id << "@" << i << " L=" << n.config.lease.count()
            << " D=" << n.config.renew_deadline.count() << " G=" << n.guardian.kill_grace.count()
            << " skew="
            << (n.config.max_clock_skew ? std::to_string(n.config.max_clock_skew->count())
                                        : std::string("off"))
            << " wall" << (n.wall_offset.count() >= 0 ? "+" : "") << in_ms(n.wall_offset)
            << (n.config.peer.enabled ? n.config.peer.watch ? " peer-watch" : " peer-plain"
                : n.config.s3_follower_reads == follower_reads::economy ? " economy-reads"
                                                                        : " first-hand-reads")
            << (n.config.peer.enabled ? " endpoint=" + std::to_string(static_cast<int>(n.endpoint))
                                      : std::string())
            << " priority=" << n.config.coordination.priority;
    }
    description_ = about.str();
    timeline_.add(now_, "SIM", description_);
  }
  world(const world&) = delete;
  world& operator=(const world&) = delete;

  void run(nanoseconds chaos, nanoseconds calm) {
    for (std::size_t i = 0; i < nodes_.size(); ++i) {
      at(uniform(0ms, 3000ms), [this, i] { restart(i, true); });
    }
    schedule_chaos(chaos);
    while (!queue_.empty() && queue_.top().when <= chaos + calm) {
      // Moved out of the queue's top: pop() removes the moved-from element at once.
      event next = std::move(const_cast<event&>(queue_.top()));
      queue_.pop();
      now_ = next.when;
      calm_ = now_ >= chaos;
      if (next.chaos && calm_) continue;
      next.action();
      if (::testing::Test::HasFatalFailure()) return;
    }
  }

  /// After the calm period, a healthy store and live nodes must have produced one leader.
  void check_liveness() const {
    int leaders = 0;
    for (const node& n : nodes_) {
      if (!n.leader) continue;
      ++leaders;
      const std::optional<running_job>& job = n.guardian.job;
      EXPECT_TRUE(job && !job->stopping && job->term == n.core->held_record()->term)
          << "the leader runs its job\n"
          << timeline_.text() << dump();
    }
    EXPECT_EQ(leaders, 1) << "after the calm period exactly one leader\n"
                          << timeline_.text() << dump();
    EXPECT_GT(gains_, 0u);
  }

  std::string dump() const {
    std::ostringstream out;
    const auto& current = store_->current();
    out << "\n"
        << description_
        << "\nstore: " << (current ? current->value.body + " " + current->value.etag : "absent");
    for (std::size_t i = 0; i < nodes_.size(); ++i) {
      const node& n = nodes_[i];
      const auto st = n.core ? n.core->status() : detail::core_status{};
      out << "\n"
          << n.label(i) << " alive=" << n.alive << " running=" << n.running
          << " suspended=" << n.suspended << " frozen=" << n.frozen
          << " job=" << (n.guardian.job ? std::to_string(n.guardian.job->term) : "-")
          << " part=" << n.partitioned << " role=" << static_cast<int>(st.role)
          << " op=" << (n.op != nullptr) << " leader=" << st.leader_id << " etag=" << st.etag
          << " mode=" << static_cast<int>(st.mode) << " err=" << st.last_error;
    }
    return out.str();
  }

  const leadership_checker& checker() const { return checker_; }
  /// The last events, for a failure that the checker did not report.
  std::string recent() const { return timeline_.text(); }
  std::uint64_t gains() const { return gains_; }
  /// Takeovers of a held record sooner than rule (b) allows: rule (c) decided them.
  std::uint64_t store_dated_takeovers() const { return store_dated_takeovers_; }
  /// Takeovers of a held record (by expiry).
  std::uint64_t expiry_takeovers() const { return expiry_takeovers_; }
  std::uint64_t suspended_leaders() const { return suspended_leaders_; }
  std::uint64_t peer_answers() const { return peer_answers_; }
  /// Takeovers written straight after a leader's answer named its released record.
  std::uint64_t named_release_takeovers() const { return named_release_takeovers_; }
  std::uint64_t frozen_leaders() const { return frozen_leaders_; }
  std::size_t jobs() const { return jobs_.jobs(); }
  /// Jobs the guardian killed at T + G because s3lect had not renewed (frozen, cut off).
  std::uint64_t deadline_kills() const { return deadline_kills_; }
  /// Stops of a leader's s3lect process group (scenario::guardian_attacks).
  std::uint64_t group_stops() const { return group_stops_; }
  /// Leaders' guardians their job stopped, and stops that s3lect ended itself because the
  /// guardian did not answer within G and the margin.
  std::uint64_t guardian_stops() const { return guardian_stops_; }
  std::uint64_t unanswered_stops() const { return unanswered_stops_; }
  /// Released copies that guardians wrote after their s3lect process died.
  std::size_t crash_releases() const { return crash_released_.size(); }
  /// What the releases that named a successor came to (scenario::coordinated).
  const coordination_counts& coordination() const { return coordination_.counts(); }
  /// For each crash release taken over: from the crash to the next leadership.
  const std::vector<nanoseconds>& crash_failovers() const { return crash_failovers_; }
  /// For each crash release taken over: from its commit to the next leadership.
  const std::vector<nanoseconds>& release_takeovers() const { return release_takeovers_; }

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

  template <class Low, class High>
  nanoseconds uniform(Low low, High high) {
    const auto lo = std::chrono::duration_cast<nanoseconds>(low).count();
    const auto hi = std::chrono::duration_cast<nanoseconds>(high).count();
    return nanoseconds{lo +
                       static_cast<std::int64_t>(rng_() % static_cast<std::uint64_t>(hi - lo + 1))};
  }
  bool chance(double p) { return std::uniform_real_distribution<double>(0, 1)(rng_) < p; }

  void at(nanoseconds when, std::function<void()> action, bool chaos = false) {
    queue_.push(event{std::max(when, now_), seq_++, chaos, std::move(action)});
  }
  /// Something that reaches node i's s3lect process at `when`: waits for the end of a suspend
  /// or a freeze.
  void at_node(std::size_t i, nanoseconds when, std::function<void()> action) {
    at(when, [this, i, action = std::move(action)] {
      node& n = nodes_[i];
      if (n.suspended || n.frozen) {
        n.deferred.push_back(action);
      } else {
        action();
      }
    });
  }
  /// Something that reaches node i's guardian at `when`: waits for the end of a suspend, or for
  /// the guardian to be resumed.
  void at_guardian(std::size_t i, nanoseconds when, std::function<void()> action) {
    at(when, [this, i, action = std::move(action)] {
      node& n = nodes_[i];
      if (n.suspended || n.guardian_stopped) {
        n.guardian_deferred.push_back(action);
      } else {
        action();
      }
    });
  }
  void note(const std::string& who, std::string_view what) { timeline_.add(now_, who, what); }

  // --- clocks ------------------------------------------------------------------------------------

  // Real time before `t` during which the node's boot clock stood still.
  nanoseconds frozen_before(const node& n, nanoseconds t) const {
    nanoseconds frozen{0};
    for (const freeze& f : n.freezes) {
      if (f.from < t) frozen += std::min(f.to, t) - f.from;
    }
    if (n.suspended && !scenario_.boot_clock_counts_suspend && n.suspended_since < t) {
      frozen += t - n.suspended_since;
    }
    return frozen;
  }
  // A node's clocks at real time `t`.
  instant local(const node& n, nanoseconds t) const {
    const auto scaled = [&n](nanoseconds d) {
      return nanoseconds{
          static_cast<std::int64_t>(std::llround(static_cast<double>(d.count()) * n.rate))};
    };
    // floor: system_clock counts nanoseconds in libstdc++ but microseconds in libc++.
    return {steady_time{} + n.steady_offset + scaled(t - frozen_before(n, t)),
            std::chrono::floor<std::chrono::system_clock::duration>(test_wall_epoch() +
                                                                    n.wall_offset + scaled(t))};
  }
  // The first real time at which the node's boot clock reads `when`; nullopt while a suspend
  // in progress stops it short of that.
  std::optional<nanoseconds> first_real(const node& n, steady_time when) const {
    const auto running = (when - steady_time{} - n.steady_offset).count();
    if (running <= 0) return nanoseconds{0};
    auto t =
        nanoseconds{static_cast<std::int64_t>(std::ceil(static_cast<double>(running) / n.rate))};
    for (const freeze& f : n.freezes) {
      if (f.from < t) t += f.to - f.from;
    }
    if (n.suspended && !scenario_.boot_clock_counts_suspend && n.suspended_since < t) {
      return std::nullopt;
    }
    while (local(n, t).steady < when) t += nanoseconds{1};
    return t;
  }

  // --- faults: defined in support/simulation/faults.hpp ------------------------------------

  std::size_t target();
  void schedule_chaos(nanoseconds until);
  void crash(std::size_t i, bool machine);
  void stop(std::size_t i);
  void resign(std::size_t i);
  void restart(std::size_t i, bool fresh);
  void suspend(std::size_t i, nanoseconds length);
  void redeliver(std::size_t i);
  void freeze_process(std::size_t i, nanoseconds length);
  void group_stop(std::size_t i, nanoseconds length);
  void job_stops_guardian(std::size_t i);
  void end_suspend(std::size_t i);
  void step_wall_clock(std::size_t i);

  elector_config with_id(elector_config config, std::size_t i) {
    const node& n = nodes_[i];
    config.server_id = n.id;
    config.server_address = n.address;
    config.log.level = log_level::debug;
    config.log.sink = [this, i, who = n.label(i)](log_level, std::string_view line) {
      timeline_.add(now_, who, line);
      constexpr std::string_view acquiring = "acquiring reason=";
      if (line.substr(0, acquiring.size()) == acquiring) {
        const std::string_view reason = line.substr(acquiring.size());
        nodes_[i].acquiring = std::string(reason.substr(0, reason.find(' ')));
      }
    };
    return config;
  }

  // --- the coroutine layer, simulated: support/simulation/layer.hpp ------------------------

  void apply(std::size_t i, step s);
  void arm_timer(std::size_t i, steady_time when, std::uint64_t generation, int incarnation);
  void on_gained(std::size_t i, const leadership_gained& gained);
  void start_operation(std::size_t i, storage_request request);
  void send_to_store(std::size_t i, const std::shared_ptr<operation>& op);
  void reach_store(const std::shared_ptr<operation>& op, nanoseconds when,
                   nanoseconds dating = nanoseconds{0});
  void committed(const operation& op);
  void reply_later(std::size_t i, const std::shared_ptr<operation>& op, nanoseconds when,
                   error_code ec);
  void deliver(std::size_t i, const std::shared_ptr<operation>& op, error_code ec);

  // --- peer mode, the leaders' health endpoints: support/simulation/endpoint.hpp -----------

  void start_peer_check(std::size_t i, const std::shared_ptr<operation>& op);
  bool leading(std::size_t k) const;
  bool holds(std::size_t k, const detail::peer_check_request& check) const;
  bool releasing(std::size_t k, std::uint64_t term) const;
  void serve_peer(std::size_t k, std::size_t i, const std::shared_ptr<operation>& op);
  void count_write_serial(std::size_t k);
  void answer_changed_watches(std::size_t k);
  void answer_peer(std::size_t k, std::size_t i, const std::shared_ptr<operation>& op,
                   detail::peer_watch_outcome outcome);
  void deliver_peer(std::size_t i, const std::shared_ptr<operation>& op, error_code ec,
                    const detail::peer_answer& answer);
  /// Coordinated: gives leader k's core its watching followers as candidates, soon.
  void refresh_candidates(std::size_t k);
  /// A node with `id` could take leader k's release at once: up, reachable, watching k.
  bool successor_ready(std::size_t k, const std::string& id) const;

  // --- jobs and guardians: defined in support/simulation/guardian.hpp ----------------------

  void new_guardian(std::size_t i);
  void guardian_after_step(std::size_t i, const step& s);
  void report_to_guardian(std::size_t i);
  void job_told_to_stop(std::size_t i);
  void start_job(std::size_t i, std::uint64_t term);
  void kill_job(std::size_t i, const std::string& how);
  void arm_guardian(std::size_t i);
  void guardian_machine_suspended(std::size_t i);
  void guardian_machine_woke(std::size_t i);
  void guardian_process_died(std::size_t i, bool machine);
  void resume_guardian(std::size_t i);
  void guardian_resumed(std::size_t i);
  void crash_release_read(const std::shared_ptr<crash_release>& task);
  void crash_release_decide(const std::shared_ptr<crash_release>& task, const get_result& read);
  void crash_release_write(const std::shared_ptr<crash_release>& task, const lock_record& record,
                           const std::string& etag);
  void guardian_request(const std::shared_ptr<crash_release>& task, storage_request request,
                        std::function<void(error_code, const operation&)> done);
  bool crash_release_over(const crash_release& task, const std::string& why);
  std::string guardian_nonce();

  std::mt19937_64 rng_;
  scenario scenario_;
  std::string description_;  // the seed's draw: nodes, configs, clocks, store
  timeline timeline_;
  leadership_checker checker_;
  job_checker jobs_;
  coordination_ledger coordination_;
  std::vector<node> nodes_;
  std::optional<sim_store> store_;
  store_state state_ = store_state::healthy;
  bool calm_ = false;
  nanoseconds store_latency_{0};  // each way, at most
  std::priority_queue<event> queue_;
  std::uint64_t seq_ = 0;
  nanoseconds now_{0};
  std::uint64_t gains_ = 0;
  std::uint64_t store_dated_takeovers_ = 0;
  std::uint64_t expiry_takeovers_ = 0;
  std::uint64_t suspended_leaders_ = 0;
  std::uint64_t peer_answers_ = 0;
  std::uint64_t named_release_takeovers_ = 0;
  std::uint64_t frozen_leaders_ = 0;
  std::uint64_t deadline_kills_ = 0;
  std::uint64_t group_stops_ = 0;
  std::uint64_t guardian_stops_ = 0;
  std::uint64_t unanswered_stops_ = 0;
  std::map<nanoseconds, nanoseconds> crash_released_;  // commit of a crash release -> the crash
  std::vector<nanoseconds> crash_failovers_;
  std::vector<nanoseconds> release_takeovers_;
};

}  // namespace s3lect::test::simulation
