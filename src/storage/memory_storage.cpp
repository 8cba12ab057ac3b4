#include "s3lect/memory_storage.hpp"

#include "clock_timer.hpp"

#include <boost/asio/any_completion_executor.hpp>
#include <boost/asio/append.hpp>
#include <boost/asio/associated_cancellation_slot.hpp>
#include <boost/asio/associated_executor.hpp>
#include <boost/asio/cancellation_type.hpp>
#include <boost/asio/dispatch.hpp>
#include <boost/asio/error.hpp>
#include <boost/asio/execution/outstanding_work.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/prefer.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/strand.hpp>

#include <openssl/evp.h>

#include <map>
#include <optional>
#include <stdexcept>
#include <utility>
#include <vector>

namespace s3lect::inline v1 {

namespace asio = boost::asio;
using boost::system::error_code;

namespace {

/// How S3 answers a refusal (status, error code and message as in AWS's S3 error reference).
struct refusal_answer {
  unsigned status;
  const char* code;
  const char* message;
};

std::optional<refusal_answer> store_refusal(const error_code& ec) {
  if (ec == errc::no_such_bucket) {
    return refusal_answer{404, "NoSuchBucket", "The specified bucket does not exist"};
  }
  if (ec == errc::access_denied) return refusal_answer{403, "AccessDenied", "Access Denied"};
  if (ec == errc::signature_mismatch) {
    return refusal_answer{403, "SignatureDoesNotMatch",
                          "The request signature we calculated does not match the signature "
                          "you provided. Check your key and signing method."};
  }
  if (ec == errc::invalid_access_key) {
    return refusal_answer{403, "InvalidAccessKeyId",
                          "The AWS access key Id you provided does not exist in our records."};
  }
  if (ec == errc::bad_request) return refusal_answer{400, "InvalidRequest", "Bad Request"};
  return std::nullopt;
}

}  // namespace

// ---------------------------------------------------------------------------------------------
// memory_store

std::string memory_store::etag_of(std::string_view body) {
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int size = 0;
  if (EVP_Digest(body.data(), body.size(), digest, &size, EVP_md5(), nullptr) != 1) {
    throw std::runtime_error("memory_store: MD5 is unavailable in this OpenSSL configuration");
  }
  static constexpr char hex_digits[] = "0123456789abcdef";
  std::string etag;
  etag.reserve(2 * size);
  for (unsigned int i = 0; i < size; ++i) {
    etag += hex_digits[digest[i] >> 4];
    etag += hex_digits[digest[i] & 0xf];
  }
  return etag;
}

std::optional<object> memory_store::peek(std::string_view key) const {
  const std::lock_guard lock(mutex_);
  const auto found = objects_.find(key);
  if (found == objects_.end()) return std::nullopt;
  return found->second;
}

std::string memory_store::poke(std::string key, std::string body,
                               std::optional<std::chrono::system_clock::time_point> last_modified) {
  std::string etag = etag_of(body);
  const auto stamp = last_modified ? *last_modified : now();
  const std::lock_guard lock(mutex_);
  ++stats_.pokes;
  objects_.insert_or_assign(std::move(key), object{std::move(body), etag, stamp});
  return etag;
}

void memory_store::set_clock_offset(std::chrono::system_clock::duration ahead) {
  const std::lock_guard lock(mutex_);
  clock_offset_ = ahead;
}

std::chrono::system_clock::time_point memory_store::now() const {
  std::chrono::system_clock::duration offset;
  const detail::manual_clock* manual = nullptr;
  {
    const std::lock_guard lock(mutex_);
    offset = clock_offset_;
    manual = manual_clock_;
  }
  const auto local = manual ? manual->wall_now() : std::chrono::system_clock::now();
  return std::chrono::floor<std::chrono::seconds>(local + offset);
}

void memory_store::erase(std::string_view key) {
  const std::lock_guard lock(mutex_);
  const auto found = objects_.find(key);
  if (found != objects_.end()) objects_.erase(found);
}

std::optional<object> memory_store::get(std::string_view key) {
  const std::lock_guard lock(mutex_);
  ++stats_.gets;
  const auto found = objects_.find(key);
  if (found == objects_.end()) return std::nullopt;
  return found->second;
}

memory_write_outcome memory_store::put(std::string key, std::string body,
                                       const put_condition& condition, object_metadata metadata) {
  using verdict = memory_write_outcome::verdict;
  std::string etag = etag_of(body);  // Hashed outside the lock; only the check must be atomic.
  const auto stamp = now();
  const std::lock_guard lock(mutex_);
  ++stats_.puts;
  const auto found = objects_.find(key);
  verdict refusal = verdict::committed;
  if (condition.type == put_condition::kind::if_absent) {
    if (found != objects_.end()) refusal = verdict::already_exists;
  } else if (found == objects_.end()) {
    refusal = verdict::no_such_key;
  } else if (found->second.etag != condition.etag) {
    refusal = verdict::etag_mismatch;
  }
  if (refusal != verdict::committed) {
    ++stats_.precondition_failures;
    return {refusal, {}};
  }
  ++stats_.commits;
  objects_.insert_or_assign(std::move(key),
                            object{std::move(body), etag, stamp, std::move(metadata)});
  return {verdict::committed, std::move(etag)};
}

memory_store_stats memory_store::stats() const {
  const std::lock_guard lock(mutex_);
  return stats_;
}

// ---------------------------------------------------------------------------------------------
// memory_storage

namespace detail {

class memory_request;

// What happens to one request, decided when it starts so that fault counters are consumed in
// the order requests start, whatever order their timers fire in.
enum class memory_fate { normal, partitioned, fail, conflict, commit_then_fail, lose_reply };

struct memory_admission {
  std::uint64_t id = 0;
  memory_fate fate = memory_fate::normal;
  std::chrono::milliseconds latency{0};
  error_code fail_with;
  bool race_losers_get_500 = false;
};

struct memory_storage_state {
  memory_storage_state(storage::executor_type executor, std::shared_ptr<memory_store> store,
                       std::chrono::milliseconds request_timeout)
      : executor(std::move(executor)),
        clock(detail::clock_source::of(this->executor)),
        store(std::move(store)),
        request_timeout(request_timeout) {}

  const storage::executor_type executor;
  const detail::clock_source clock;  // Latencies and timeouts follow a test's manual clock.
  const std::shared_ptr<memory_store> store;
  const std::chrono::milliseconds request_timeout;

  mutable std::mutex mutex;
  memory_faults faults;
  memory_storage_stats stats;
  std::uint64_t next_id = 1;
  // Weak: a request is owned by its pending timer wait or posted step, never by the view.
  std::map<std::uint64_t, std::weak_ptr<memory_request>> pending;

  // Registers a new request and decides its fate from the faults in force.
  memory_admission admit(bool is_put, const std::shared_ptr<memory_request>& request) {
    const std::lock_guard lock(mutex);
    memory_admission admission;
    admission.id = next_id++;
    admission.latency = faults.latency;
    admission.fail_with = faults.fail_with;
    admission.race_losers_get_500 = faults.race_losers_get_500;
    if (faults.partitioned) {
      admission.fate = memory_fate::partitioned;
    } else if (faults.fail_next > 0) {
      --faults.fail_next;
      admission.fate = memory_fate::fail;
    } else if (is_put && faults.conflict_next > 0) {
      --faults.conflict_next;
      admission.fate = memory_fate::conflict;
    } else if (is_put && faults.commit_then_fail_next > 0) {
      --faults.commit_then_fail_next;
      admission.fate = memory_fate::commit_then_fail;
    } else if (faults.lose_next_replies > 0) {
      --faults.lose_next_replies;
      admission.fate = memory_fate::lose_reply;
    }
    if (admission.fate != memory_fate::normal) ++stats.faults_injected;
    ++(is_put ? stats.puts : stats.gets);
    pending.emplace(admission.id, request);
    return admission;
  }

  // Unregisters a finished request and counts how it ended.
  void completed(std::uint64_t id, const error_code& ec, bool timed_out) {
    const std::lock_guard lock(mutex);
    pending.erase(id);
    if (timed_out) ++stats.timeouts;
    if (!ec) return;
    if (ec != errc::precondition_failed) ++stats.failures;
    if (ec == asio::error::operation_aborted) ++stats.cancellations;
  }
};

// One GET or PUT in flight. Every step runs on the request's strand; the initiating function
// only posts the first step, and cancellation and destruction of the view only post an abort,
// so the handler is never invoked inline and is completed exactly once (`done_`).
class memory_request : public std::enable_shared_from_this<memory_request> {
 public:
  using get_handler = asio::any_completion_handler<get_signature>;
  using put_handler = asio::any_completion_handler<put_signature>;

  memory_request(std::shared_ptr<memory_storage_state> state, std::string key, get_handler handler)
      : state_(std::move(state)),
        strand_(asio::make_strand(state_->executor)),
        key_(std::move(key)),
        get_handler_(std::move(handler)) {
    track_work(get_handler_);
  }

  memory_request(std::shared_ptr<memory_storage_state> state, std::string key, std::string body,
                 put_condition condition, object_metadata metadata, put_handler handler)
      : state_(std::move(state)),
        strand_(asio::make_strand(state_->executor)),
        key_(std::move(key)),
        body_(std::move(body)),
        condition_(std::move(condition)),
        metadata_(std::move(metadata)),
        put_handler_(std::move(handler)) {
    track_work(put_handler_);
  }

  // Called once, in the initiating function.
  void start() {
    admission_ = state_->admit(is_put(), shared_from_this());
    // The slot is installed before the first step is posted: once posted, the request may
    // complete on another thread, and completion clears the slot. An abort that overtakes
    // begin() completes the request, and begin() then does nothing.
    asio::cancellation_slot slot =
        is_put() ? put_handler_.get_cancellation_slot() : get_handler_.get_cancellation_slot();
    if (slot.is_connected()) {
      slot.assign([weak = weak_from_this()](asio::cancellation_type type) {
        if ((type & asio::cancellation_type::terminal) == asio::cancellation_type::none) return;
        if (const auto self = weak.lock()) self->abort(asio::error::operation_aborted);
      });
    }
    asio::post(strand_, [self = shared_from_this()] { self->begin(); });
  }

  // Completes the request with `ec` unless it already completed. Callable from any thread.
  void abort(error_code ec) {
    asio::post(strand_, [self = shared_from_this(), ec] {
      const char* why = ec == errc::stopped ? "the memory_storage was destroyed" : "cancelled";
      self->fail(ec, 0, {}, why);
    });
  }

 private:
  using step = void (memory_request::*)();

  bool is_put() const noexcept { return condition_.has_value(); }

  template <class Handler>
  void track_work(const Handler& handler) {
    handler_work_.emplace(asio::prefer(asio::get_associated_executor(handler, state_->executor),
                                       asio::execution::outstanding_work.tracked));
  }

  void begin() {
    if (done_) return;
    const auto now = state_->clock.now();
    started_ = now;
    // Both timers count from the same instant, and when both have expired by the time a loaded
    // machine looks, the earlier expiry runs first: a latency shorter than the timeout always
    // reaches the store, whatever the scheduling jitter.
    if (admission_.fate == memory_fate::partitioned) {
      hang();
    } else {
      at(now + admission_.latency, &memory_request::reach_store);
    }
    if (state_->request_timeout > std::chrono::milliseconds::zero()) {
      deadline_.expires_at(now + state_->request_timeout);
      deadline_.async_wait([self = shared_from_this()](const error_code& ec) {
        if (!ec) self->time_out();
      });
    }
  }

  // Runs `next` at `when`, unless the request completes first.
  void at(detail::boot_clock::time_point when, step next) {
    step_timer_.expires_at(when);
    step_timer_.async_wait([self = shared_from_this(), next](const error_code& ec) {
      if (!ec && !self->done_) (self.get()->*next)();
    });
  }

  // Waits for the deadline, a cancellation or the view's destruction. The pending wait keeps
  // the request alive, so its handler is never dropped without being completed.
  void hang() {
    step_timer_.expires_at(detail::boot_clock::time_point::max());
    step_timer_.async_wait([self = shared_from_this()](const error_code&) {});
  }

  void reach_store() {
    info_.request_id = "memory-" + std::to_string(admission_.id);
    info_.server_date = state_->store->now();
    switch (admission_.fate) {
      case memory_fate::fail:
        set_failure(admission_.fail_with);
        break;
      case memory_fate::conflict:
        set_error(errc::conflict, 409, "ConditionalRequestConflict",
                  "A conflicting conditional operation is currently in progress against this "
                  "resource. Please try again.");
        break;
      default:
        if (is_put()) {
          apply_put();
        } else {
          apply_get();
        }
        break;
    }
    if (admission_.fate == memory_fate::commit_then_fail) {
      etag_.clear();
      set_error(errc::outcome_unknown, 500, "InternalError",
                "We encountered an internal error. Please try again.");
    }
    if (admission_.fate == memory_fate::lose_reply) return hang();
    at(state_->clock.now() + admission_.latency, &memory_request::reply);
  }

  void apply_get() {
    found_ = state_->store->get(key_);
    if (found_) {
      info_.http_status = 200;
    } else {
      // S3 answers 404 NoSuchKey; the client reports a missing object as a successful read.
      info_.http_status = 404;
      info_.error_code = "NoSuchKey";
      info_.message = "The specified key does not exist.";
    }
  }

  void apply_put() {
    using verdict = memory_write_outcome::verdict;
    memory_write_outcome outcome = state_->store->put(key_, body_, *condition_, metadata_);
    if (outcome.result == verdict::committed) {
      info_.http_status = 200;
      etag_ = std::move(outcome.etag);
      return;
    }
    if (admission_.race_losers_get_500) {
      set_error(errc::outcome_unknown, 500, "UnknownError", {});
    } else if (outcome.result == verdict::no_such_key) {
      set_error(errc::precondition_failed, 404, "NoSuchKey", "The specified key does not exist.");
    } else {
      set_error(errc::precondition_failed, 412, "PreconditionFailed",
                "At least one of the pre-conditions you specified did not hold");
    }
  }

  // An injected failure: the HTTP answer a store would have given for it, if any, reported as
  // s3_client reports that answer: a 5xx on a PUT (503 SlowDown too) leaves its outcome unknown.
  void set_failure(const error_code& ec) {
    if (ec == errc::server_error || ec == errc::outcome_unknown) {
      const error_code reported = is_put() ? make_error_code(errc::outcome_unknown) : ec;
      set_error(reported, 500, "InternalError",
                "We encountered an internal error. Please try again.");
    } else if (ec == errc::throttled) {
      // As s3_client reads a 503 SlowDown: a PUT's outcome is unknown (see classify_reply).
      const error_code reported = is_put() ? make_error_code(errc::outcome_unknown) : ec;
      set_error(reported, 503, "SlowDown", "Please reduce your request rate.");
    } else if (const auto refusal = store_refusal(ec)) {
      // The store's own refusals, answered as S3 answers them (with its code and status), so
      // that a test sees what a program meets: store_error::info() names the S3 error code.
      set_error(ec, refusal->status, refusal->code, refusal->message);
    } else {
      info_ = response_info{};  // A local failure (connection, TLS, …): no HTTP answer at all.
      set_error(ec, 0, {}, ec.message());
    }
  }

  void set_error(error_code ec, unsigned http_status, std::string code, std::string message) {
    ec_ = ec;
    info_.http_status = http_status;
    info_.error_code = std::move(code);
    info_.message = std::move(message);
  }

  // As s3_client: a PUT that may have been delivered has an unknown outcome, whether or not it
  // reached the store; only a partitioned PUT is known never to have left.
  void time_out() {
    const std::string waited =
        "no reply within " + std::to_string(state_->request_timeout.count()) + " ms";
    timed_out_ = true;
    if (is_put() && admission_.fate != memory_fate::partitioned) {
      fail(errc::outcome_unknown, 0, {}, waited + "; the write may have been applied");
    } else {
      fail(errc::timeout, 0, {}, waited);
    }
  }

  void fail(error_code ec, unsigned http_status, std::string code, std::string message) {
    if (done_) return;
    // Nothing the store did reaches the client: drop what reach_store() prepared.
    etag_.clear();
    found_.reset();
    info_ = response_info{};
    set_error(ec, http_status, std::move(code), std::move(message));
    reply();
  }

  void reply() {
    if (done_) return;
    done_ = true;
    step_timer_.cancel();
    deadline_.cancel();
    if (started_) {
      info_.round_trip =
          std::chrono::duration_cast<std::chrono::microseconds>(state_->clock.now() - *started_);
    }
    state_->completed(admission_.id, ec_, timed_out_);
    if (is_put()) {
      deliver(put_handler_, put_result{std::move(etag_), std::move(info_)});
    } else {
      deliver(get_handler_, get_result{std::move(found_), std::move(info_)});
    }
    handler_work_.reset();
  }

  template <class Signature, class Result>
  void deliver(asio::any_completion_handler<Signature>& stored, Result result) {
    // Move-constructed, never move-assigned (docs/architecture.md#gcc-12-coroutine-rules:
    // Boost 1.81's move-assignment recurses).
    asio::any_completion_handler<Signature> handler(std::move(stored));
    const auto handler_executor = asio::get_associated_executor(handler, state_->executor);
    asio::dispatch(handler_executor,
                   [handler = std::move(handler), ec = ec_, result = std::move(result)]() mutable {
                     // Our slot handler goes before the caller's handler runs (the caller may
                     // reuse the slot). It is cleared on the handler's executor, where the
                     // caller emits (Asio's rule): cleared from the request's strand, it raced
                     // an emission (TSan, in the stress test). An emission before this point
                     // only posts an abort that finds the request done, or gone (weak_ptr).
                     handler.get_cancellation_slot().clear();
                     std::move(handler)(ec, std::move(result));
                   });
  }

  const std::shared_ptr<memory_storage_state> state_;
  asio::strand<storage::executor_type> strand_;
  detail::clock_timer<asio::steady_timer> step_timer_{strand_, state_->clock};
  detail::clock_timer<asio::steady_timer> deadline_{strand_, state_->clock};
  std::optional<asio::any_completion_executor> handler_work_;

  std::string key_;
  std::string body_;
  std::optional<put_condition> condition_;  // nullopt for a GET.
  object_metadata metadata_;
  get_handler get_handler_;
  put_handler put_handler_;

  memory_admission admission_;
  std::optional<detail::boot_clock::time_point> started_;
  bool done_ = false;
  bool timed_out_ = false;

  error_code ec_;
  response_info info_;
  std::optional<object> found_;
  std::string etag_;
};

}  // namespace detail

memory_storage::memory_storage(executor_type executor, std::shared_ptr<memory_store> store,
                               std::chrono::milliseconds request_timeout)
    : store_(store),
      state_(std::make_shared<detail::memory_storage_state>(std::move(executor), std::move(store),
                                                            request_timeout)) {
  if (!store_) throw std::invalid_argument("memory_storage: store must not be null");
  if (detail::manual_clock* manual = state_->clock.manual()) {
    const std::lock_guard lock(store_->mutex_);
    store_->manual_clock_ = manual;
  }
  if (request_timeout < std::chrono::milliseconds::zero()) {
    throw std::invalid_argument("memory_storage: request_timeout must not be negative");
  }
}

memory_storage::~memory_storage() {
  std::vector<std::shared_ptr<detail::memory_request>> doomed;
  {
    const std::lock_guard lock(state_->mutex);
    for (const auto& [id, weak] : state_->pending) {
      if (auto request = weak.lock()) doomed.push_back(std::move(request));
    }
  }
  for (const auto& request : doomed) request->abort(errc::stopped);
}

memory_storage::executor_type memory_storage::get_executor() const {
  return state_->executor;
}

const std::shared_ptr<memory_store>& memory_storage::store() const noexcept {
  return store_;
}

void memory_storage::set_faults(const memory_faults& faults) {
  const std::lock_guard lock(state_->mutex);
  state_->faults = faults;
}

memory_faults memory_storage::faults() const {
  const std::lock_guard lock(state_->mutex);
  return state_->faults;
}

memory_storage_stats memory_storage::stats() const {
  const std::lock_guard lock(state_->mutex);
  return state_->stats;
}

std::size_t memory_storage::pending() const {
  const std::lock_guard lock(state_->mutex);
  return state_->pending.size();
}

void memory_storage::get_impl(std::string key,
                              asio::any_completion_handler<get_signature> handler) {
  std::make_shared<detail::memory_request>(state_, std::move(key), std::move(handler))->start();
}

void memory_storage::put_impl(std::string key, std::string body, put_condition condition,
                              asio::any_completion_handler<put_signature> handler) {
  put_with_metadata_impl(std::move(key), std::move(body), std::move(condition), {},
                         std::move(handler));
}

void memory_storage::put_with_metadata_impl(std::string key, std::string body,
                                            put_condition condition, object_metadata metadata,
                                            asio::any_completion_handler<put_signature> handler) {
  std::make_shared<detail::memory_request>(state_, std::move(key), std::move(body),
                                           std::move(condition), std::move(metadata),
                                           std::move(handler))
      ->start();
}

}  // namespace s3lect::inline v1
