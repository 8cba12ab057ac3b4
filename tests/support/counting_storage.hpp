// A storage that forwards every request to another one and dates each GET of a candidate
// registration object (`<lock_key>.candidates/...`) other than the node's own: the registration
// reads by which a leader verifies claims (docs/peer-mode.md#claims-that-cannot-be-forged),
// counted from outside the elector, so that a test can hold the leader to its one read per F.
#pragma once

#include <s3lect/storage.hpp>

#include <boost/asio/any_completion_handler.hpp>

#include <chrono>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

namespace s3lect::test {

class counting_storage final : public storage {
 public:
  /// `own_registration`: this node's registration key, whose reads (its own registration's GET
  /// before the PUT) are not verification and are not counted.
  counting_storage(storage& inner, std::string lock_key, std::string own_registration)
      : inner_(inner),
        prefix_(std::move(lock_key) + ".candidates/"),
        own_(std::move(own_registration)) {}

  executor_type get_executor() const override { return inner_.get_executor(); }
  bool answers_authenticated() const noexcept override { return inner_.answers_authenticated(); }

  /// When each counted GET was sent, in order.
  std::vector<std::chrono::steady_clock::time_point> registration_reads() const {
    std::lock_guard lock(mutex_);
    return reads_;
  }

 protected:
  void get_impl(std::string key,
                boost::asio::any_completion_handler<get_signature> handler) override {
    if (key.starts_with(prefix_) && key != own_) {
      std::lock_guard lock(mutex_);
      reads_.push_back(std::chrono::steady_clock::now());
    }
    inner_.async_get(std::move(key), std::move(handler));
  }
  void put_impl(std::string key, std::string body, put_condition condition,
                boost::asio::any_completion_handler<put_signature> handler) override {
    inner_.async_put(std::move(key), std::move(body), std::move(condition), std::move(handler));
  }
  void put_with_metadata_impl(std::string key, std::string body, put_condition condition,
                              object_metadata metadata,
                              boost::asio::any_completion_handler<put_signature> handler) override {
    inner_.async_put_with_metadata(std::move(key), std::move(body), std::move(condition),
                                   std::move(metadata), std::move(handler));
  }

 private:
  storage& inner_;
  const std::string prefix_;
  const std::string own_;
  mutable std::mutex mutex_;
  std::vector<std::chrono::steady_clock::time_point> reads_;
};

}  // namespace s3lect::test
