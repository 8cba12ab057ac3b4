// The elector's configuration: an aggregate with the design's defaults, checked by validate().
#pragma once

#include <s3lect/detail/abi.hpp>

#include <s3lect/logger.hpp>
#include <s3lect/retry.hpp>
#include <s3lect/tls.hpp>

#include <boost/asio/awaitable.hpp>

#include <chrono>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace s3lect::inline v1 {

struct s3_config;
class storage;

/// Peer mode (docs/peer-mode.md): followers in stable mode ask the leader's health endpoint whether
/// it still leads instead of reading S3. Nested in elector_config as `peer`.
struct peer_config {
  /// Followers in stable mode check the leader's health endpoint instead of reading S3.
  bool enabled = false;
  /// Path of the leader's health endpoint.
  std::string health_path = "/health/leadership";
  /// Timeout of one attempt of a peer health check.
  std::chrono::milliseconds timeout{std::chrono::seconds{3}};
  /// Keep one watch open on the leader's endpoint (`?watch=&term=&serial=`): the leader
  /// answers it on every renewal, release or demotion, so a graceful release reaches followers
  /// at once and a crashed leader's closed connection is noticed at once. Off: a plain check
  /// every infrequent interval (what a Go leader supports).
  bool watch = false;
  /// The follower's side of the TLS connection to the leader. `ca_file` / `ca_pem`: the CAs the
  /// leader's certificate must chain to (both empty: the system's default trust store); the
  /// certificate must name the host or IP of leaderAddr. `certificate_*` / `private_key_*`: the
  /// client certificate (leaf first) and its unencrypted key for mutual TLS. `verify_peer` must
  /// stay on and `require_client_cert` off (a server's setting).
  tls_config tls;
  /// Zero-configuration TLS (docs/peer-mode.md#zero-configuration-tls): the public_key_pin() of
  /// the certificate this node's health endpoint presents, e.g. make_self_signed_identity()'s.
  /// Written as "peerKeyPin" into every record this elector writes while leading, so that
  /// followers trust that certificate by its key instead of by a CA. Empty: no pin (CA mode).
  /// A follower uses the pin of the record it read when there is one and the record came from
  /// a store whose answers are authenticated (storage::answers_authenticated()) or trusted
  /// (below), whatever `tls` says; `tls`'s CAs otherwise.
  std::string key_pin;
  /// Trust the leader's address and key pin in records read from a store whose answers are not
  /// authenticated: plain HTTP over a network (storage::answers_authenticated() false). SigV4
  /// signs requests, not answers, so anyone on the path to such a store can answer with a
  /// forged record whose leaderAddr and peerKeyPin send followers to an impostor that says
  /// "all well" for as long as it likes: they stay off the store and never take over. The
  /// session token travels in clear there too. Set it only for a path as trusted as the store.
  /// Off (the default), peer mode over such a store needs CAs in `tls` (the follower then
  /// ignores record pins and checks the leader's certificate against them), and
  /// validate(const storage&) refuses it without (docs/peer-mode.md#trust-chain).
  bool trust_unauthenticated_store = false;
};

/// The rule of elector_config::validate(const storage&) that depends on the store, for a store
/// whose answers_authenticated() is `store_authenticated`: nullopt when `peer` may be used with
/// it, else why not and what to do.
std::optional<std::string> validate_store_trust(const peer_config& peer, bool store_authenticated);

/// How often a follower reads the lock in S3 mode (peer.enabled off). docs/performance.md tables
/// what each costs and gives.
enum class follower_reads {
  /// Every F / 2, settled or not: a follower sees each renewal within F / 2 of its write, so it
  /// takes over a crashed leader at most L + F / 2 after that leader's last renewal (rule (b),
  /// counted from its own first sight of the record), and a released record within F / 2.
  first_hand,
  /// Every F until settled, then every I (the Go package's schedule): once settled, a twelfth of
  /// first_hand's reads at the default proportions (I = 6 F), for large fleets where GETs cost.
  /// A settled follower sees a crash or a release up to I late, and then may have to wait for
  /// rule (c)'s margin.
  economy,
};

/// What a leader does when a verified candidate of strictly higher priority has watched it
/// without a break for the settle time (docs/coordination.md#preemption).
enum class preemption {
  /// Hand over to it: report the loss, then write a released record naming it (as
  /// async_resign_to()).
  automatic,
  /// Only tell the application (elector::async_wait_for_handover_advice), which stops its work
  /// and calls async_resign_to() itself: what `s3lect run` does, so that its command has
  /// stopped before the release is written.
  advise,
  /// Never: priorities only order handovers and crash failovers.
  off,
};

/// Coordinated leadership (docs/coordination.md): which node should lead, and who goes first when
/// the lock changes hands. Every setting only orders *when* a node sends its conditional write;
/// who leads is still decided by that write alone, so no setting here can make a second leader.
/// Nested in elector_config as `coordination`.
struct coordination_config {
  /// Higher is preferred, in -1 000 000 .. 1 000 000. Written into the records this node writes
  /// while leading, and claimed to the leader by a watching follower in peer mode.
  std::int32_t priority = 0;
  /// How long the others hold off when a released record names a successor (or keeps the forced
  /// out holder out), counted by each reader's monotonic clock from its own first sight of the
  /// record. nullopt: F / 5, kept within 100 ms .. L / 2 (1 s at the defaults). A reader never
  /// holds off longer than its own lease, whatever a record says.
  std::optional<std::chrono::milliseconds> handover_window;
  /// Crash failover: a follower that the dead leader's last record ranks r-th (0 = best) delays
  /// its expiry takeover by min(r, max_ranks) x rank_step; a follower it does not list, by
  /// max_ranks x rank_step. nullopt: with peer.watch (whose followers date the record within
  /// milliseconds of each other) 250 ms, or less for short leases so that all ranks together
  /// take at most (L - D) / 2; else 0 (ranks would cost more than they order).
  std::optional<std::chrono::milliseconds> rank_step;
  /// The most ranks a delay counts, at most 8 (the most candidates a record lists).
  unsigned max_ranks = 3;
  /// Preemption by a strictly higher-priority candidate. Nothing happens while all priorities
  /// are equal, whatever this says.
  preemption preempt = preemption::automatic;
  /// How long a candidate must have watched without a break, and the leader have led, before a
  /// preemption. nullopt: the lease. A candidate whose watch breaks starts its count again; one
  /// the leader took leadership back from by expiry (it crashed or was cut off) within two
  /// settle times settles twice as long next time (up to 16x).
  std::optional<std::chrono::milliseconds> settle;
};

/// The timing of an elector with every setting optional, for elector_config::apply_timing(): the
/// settings given are kept, and each one not given follows those given.
struct elector_timing {
  std::optional<std::chrono::milliseconds> lease;                ///< L
  std::optional<std::chrono::milliseconds> renew_deadline;       ///< D
  std::optional<std::chrono::milliseconds> frequent_interval;    ///< F
  std::optional<std::chrono::milliseconds> infrequent_interval;  ///< I
  /// Bound on one S3 request of the elector.
  std::optional<std::chrono::milliseconds> request_timeout;
  /// Delays between the retries of a failed request.
  std::optional<std::vector<std::chrono::milliseconds>> retry_delays;
  /// Bound on one peer-mode health check or watch request.
  std::optional<std::chrono::milliseconds> peer_timeout;
};

/// Settings of one elector. Set the fields you need, then validate(); the elector validates
/// again and refuses an invalid configuration. Durations are whole milliseconds.
///
/// Names used below: L = lease, D = renew_deadline, F = frequent_interval,
/// I = infrequent_interval, W = retry.worst_case(request_timeout), the longest one storage
/// operation can take with all its attempts and delays.
///
/// Rules checked by validate(), in this order, each naming its field:
/// - lock_key: non-empty, at most 1024 bytes (S3's key limit), valid UTF-8.
/// - server_id: non-empty, at most 1024 bytes, valid UTF-8 (it is written into the JSON record,
///   and a record we could not parse back would be "held by an unknown writer").
/// - server_address: at most 1024 bytes, valid UTF-8. With peer.enabled, followers reach the
///   leader's health endpoint there; empty, a health_server in zero-configuration TLS (or with
///   publish_endpoint) fills it in (through elector::health_source()), and records written
///   while it is empty send followers to S3.
/// - 0 < lease ≤ 24 h (readers reject a record whose leaseMs exceeds a day as malformed).
/// - frequent_interval < renew_deadline < lease (L > D > F), then frequent_interval > 0.
/// - infrequent_interval ≥ frequent_interval.
/// - max_clock_skew, when set, ≥ 0.
/// - 0 ≤ acquire_grace ≤ lease. A grace only delays the report of a leadership the elector
///   already holds and renews, so no value is unsafe; one longer than the lease is a unit
///   mistake, not a policy.
/// - request_timeout > 0.
/// - retry: retry.validate(), and W ≤ D − F. A renewal starts at S + F (S = when the last
///   successful renewal was sent); "fits" means that renewal, every attempt running into
///   request_timeout plus every delay, has completed by S + D, the moment the leader would
///   demote itself. With the default delays (100 ms, 1 s) and three attempts, the default
///   request_timeout of 1 s gives W = 4.1 s ≤ D − F = 5 s (2 s would give 7.1 s and fail).
///   Only the first operation has to fit: if it ends in doubt, the re-read that resolves it may
///   still run past S + D, and then the leader demotes itself, which is always safe.
/// - peer.health_path starts with '/'; peer.timeout > 0; peer.tls: certificate and private key
///   at most one of file and PEM each, both or neither; verify_peer on; require_client_cert
///   off; peer.key_pin empty or "sha256:" and 64 lowercase hex digits. (Unreadable files are
///   reported by the elector's constructor.)
/// - coordination: |priority| <= 1 000 000; 0 < handover_window <= lease; max_ranks <= 8;
///   frequent_interval <= settle <= 24 h;
///   0 <= rank_step and max_ranks x rank_step <= lease - renew_deadline (a ranked takeover
///   waits at most that much longer than an unranked one); with peer.enabled, lock_key at most
///   979 bytes (each node's candidate registration `<lock_key>.candidates/<32 hex>` must fit in
///   S3's 1024-byte keys).
/// - validate(const storage&) only, which the elector's constructor and update_config() apply:
///   with peer.enabled over a store whose answers are not authenticated, peer.tls names CAs or
///   peer.trust_unauthenticated_store is set (validate_store_trust()).
struct elector_config {
  /// S3 object key of the lock record, e.g. "leader/my-group.json".
  std::string lock_key;
  /// This process's unique identity, written as the record's leaderID.
  std::string server_id;
  /// Where followers reach this process's health endpoint when it leads (peer mode).
  std::string server_address;

  /// L: how long a record stays valid without renewal (Go's LeaderTimeout).
  std::chrono::milliseconds lease{std::chrono::seconds{15}};
  /// D: a leader whose last successful renewal was sent D ago demotes itself.
  std::chrono::milliseconds renew_deadline{std::chrono::seconds{10}};
  /// F: leaders renew, and followers in frequent mode read, this often (in S3 mode, with
  /// follower_reads::first_hand, followers read every F / 2 instead).
  std::chrono::milliseconds frequent_interval{std::chrono::seconds{5}};
  /// I: followers in stable mode read (or check the leader's health) this often; in S3 mode
  /// only with follower_reads::economy.
  std::chrono::milliseconds infrequent_interval{std::chrono::seconds{30}};
  /// S3 mode's follower schedule: every F / 2 (first_hand), or every F then I (economy).
  /// Peer mode ignores it: its followers ask the leader and read the store seldom.
  follower_reads s3_follower_reads = follower_reads::first_hand;
  /// Expiry rule (c), on the store's clock: how far the store's front ends' clocks may disagree.
  /// A follower may take over L after the moment the store dates the record to (the GET answer's
  /// Date − Last-Modified − 2 s − max_clock_skew before the read). No node's wall clock is used.
  /// nullopt disables rule (c): only the follower's own monotonic clock counts.
  std::optional<std::chrono::milliseconds> max_clock_skew{std::chrono::seconds{2}};
  /// After taking over an expired (not released) record, hold and renew it for this long
  /// before reporting leadership: a margin against an old leader that does not know it lost.
  std::chrono::milliseconds acquire_grace{0};
  /// Timeout of one attempt of a storage request; the retry policy makes several attempts. The
  /// elector enforces it around each attempt, on any storage. It is not s3_config's
  /// request_timeout (5 s), which bounds every request of an s3_client, with or without an
  /// elector: this one is part of the elector's timing (W <= D - F) and follows the lease, that
  /// one does not. Whichever is shorter ends an attempt; match_request_timeout() makes a client
  /// that serves this elector use this one.
  std::chrono::milliseconds request_timeout{std::chrono::seconds{1}};
  /// Retry schedule of every storage request (and peer check).
  retry_policy retry;

  /// Peer mode: followers ask the leader instead of reading S3 (off by default).
  peer_config peer;
  /// Coordinated leadership: priority, successor window and crash-failover ranks.
  coordination_config coordination;

  /// Runs after the lock is taken, before leadership is reported, with the new term. It runs
  /// beside the renewals, on the elector's executor through a strand of its own (so even a hook
  /// that blocks its thread holds up no renewal while the io_context has another thread), and
  /// is cancelled if leadership is lost meanwhile.
  /// If it throws, the elector resigns and backs off (F, doubling up to I) before competing
  /// again. Empty: leadership is reported at once.
  std::function<boost::asio::awaitable<void>(std::uint64_t term)> on_acquire;
  /// Runs after a reported leadership ended, with its term; best effort (a throw is logged).
  /// Leader work must already be stopped by then: use async_wait_for_loss to stop it.
  std::function<boost::asio::awaitable<void>(std::uint64_t term)> on_lose;

  /// Where the elector logs; silent by default.
  logger log;

  /// The defaults scaled to `lease`: every interval, deadline, timeout and retry delay keeps the
  /// default proportions to the lease (15 s : 10 s : 5 s : 30 s, 1 s per request attempt, retry
  /// delays 100 ms and 1 s, 3 s per peer check), rounded down to whole milliseconds; the result
  /// validates for any lease from 15 ms to 24 h (below, request_timeout rounds down to 0, and
  /// validate() says so). max_clock_skew and acquire_grace keep
  /// their defaults: they bound the store's clocks and a policy, not the lease. Set lock_key and
  /// server_id, then change what you need. docs/configuration.md tables the result.
  /// Same as apply_timing() with only the lease given, on a default configuration.
  static elector_config for_lease(std::chrono::milliseconds lease);

  /// Sets the timing fields (lease, renew_deadline, frequent_interval, infrequent_interval,
  /// request_timeout, retry.delays, peer.timeout) to those of `given`, and each one not given
  /// to follow those given, in the default proportions: the lease as set (default 15 s); the renew
  /// deadline and the peer timeout from the lease (as for_lease); the frequent interval from a
  /// given renew deadline (D / 2, else as for_lease); the infrequent interval from a given renew
  /// deadline or frequent interval (6 F, else as for_lease); the request timeout and the retry
  /// delays from a given renew deadline or frequent interval through the renewal's budget D - F
  /// (1/5; 1/50 and 1/5, else as for_lease). With only the lease given, that is for_lease(L);
  /// with nothing given, the defaults. When a given L, D or F is not in (0, 24 h], nothing is
  /// derived (the defaults stand) and validate() names it. The other fields are left alone.
  /// `s3lect run` derives its timing options with this function.
  void apply_timing(const elector_timing& given);

  /// coordination.handover_window, or its default: F / 5 within 100 ms .. L / 2.
  std::chrono::milliseconds handover_window() const;
  /// coordination.settle, or its default: the lease.
  std::chrono::milliseconds settle_time() const;
  /// coordination.rank_step, or its default: with peer.watch min(250 ms, (L - D) / (2 x
  /// max_ranks)), else 0.
  std::chrono::milliseconds rank_step() const;

  /// How long leader work may take to stop once leadership is lost (`s3lect run`'s default
  /// --kill-grace, SIGTERM to SIGKILL): 3/5 of lease - renew_deadline, 3 s at the defaults, so
  /// that it has stopped before another node may take over.
  std::chrono::milliseconds stop_grace() const;

  /// Sets client.request_timeout to request_timeout, for an s3_client that serves this elector:
  /// its requests beside the elector under `retry` (a first read of the lock, a release on the
  /// elector's behalf) are then bounded alike, and a lease above 75 s is not cut short by the
  /// client's default 5 s.
  void match_request_timeout(s3_config& client) const;

  /// Returns nullopt when valid, else "field: what is wrong" for the first offending field,
  /// e.g. "renew_deadline: must be less than lease (15000 ms), is 15000 ms".
  std::optional<std::string> validate() const;
  /// validate(), then validate_store_trust() for `store`.
  std::optional<std::string> validate(const storage& store) const;
};

/// Checks that `next` may replace `current` in a running elector: `next` is valid and keeps
/// lock_key and server_id. Returns nullopt when it may, else why not.
std::optional<std::string> validate_update(const elector_config& current,
                                           const elector_config& next);

}  // namespace s3lect::inline v1
