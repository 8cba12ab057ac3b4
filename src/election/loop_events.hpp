// The events the elector's loop reacts to, queued on its strand by the operations, the hooks
// and the public API.
#pragma once

#include <s3lect/config.hpp>
#include <s3lect/storage.hpp>

#include "candidate.hpp"
#include "peer_response.hpp"

#include <boost/system/error_code.hpp>

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <variant>
#include <vector>

namespace s3lect::inline v1::detail {

struct read_done {
  boost::system::error_code ec;
  get_result result;
};
struct write_done {
  boost::system::error_code ec;
  put_result result;
};
struct peer_done {
  boost::system::error_code ec;
  peer_answer answer;
};
struct stop_request {};
struct resign_request {
  std::chrono::milliseconds hold_off;
  std::optional<std::string> successor;  // async_resign_to: whom the release names
};
struct config_request {
  elector_config config;
};
struct hook_done {
  std::uint64_t period;
  bool succeeded;
  std::string error;
};
struct shutdown_request {};
struct candidates_changed {
  std::vector<candidate> list;
};

using loop_event = std::variant<read_done, write_done, peer_done, stop_request, resign_request,
                                config_request, hook_done, shutdown_request, candidates_changed>;

}  // namespace s3lect::inline v1::detail
