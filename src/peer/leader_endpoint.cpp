#include <s3lect/error.hpp>
#include <s3lect/leader_endpoint.hpp>

#include "peer_client.hpp"

#include <boost/asio/associated_cancellation_slot.hpp>
#include <boost/asio/associated_executor.hpp>
#include <boost/asio/bind_cancellation_slot.hpp>
#include <boost/asio/bind_executor.hpp>

namespace s3lect::inline v1 {

namespace asio = boost::asio;

namespace {

detail::peer_client_config peer_config_of(const leader_endpoint_config& config) {
  detail::peer_client_config peer;
  peer.tls = config.tls;
  peer.health_path = config.health_path;
  peer.timeout = config.timeout;
  return peer;
}

/// A leader that answers a watch at once without saying why does not hold watches; one that
/// no longer leads with the term has changed whatever its header says.
leader_watch_end end_of(const detail::peer_answer& answer, std::uint64_t watched_term) {
  if (!answer.leader || answer.term != watched_term) return leader_watch_end::changed;
  switch (answer.watch) {
    case detail::peer_watch_outcome::changed:
      return leader_watch_end::changed;
    case detail::peer_watch_outcome::timeout:
      return leader_watch_end::timeout;
    default:
      return leader_watch_end::not_held;
  }
}

/// Completes the caller's handler with the public form of a peer answer.
struct answer_converter {
  asio::any_completion_handler<leader_endpoint_client::watch_signature> handler;
  std::uint64_t watched_term = 0;

  void operator()(boost::system::error_code error, detail::peer_answer answer) {
    leader_endpoint_answer out;
    if (!error) {
      out.leads = answer.leader;
      out.term = answer.term;
      out.leader_id = answer.leader_id;
      out.end = end_of(answer, watched_term);
    }
    std::move(handler)(error, std::move(out));
  }
};

}  // namespace

std::optional<std::string> leader_endpoint_config::validate() const {
  return peer_config_of(*this).validate();
}

leader_endpoint_client::leader_endpoint_client(executor_type executor,
                                               leader_endpoint_config config) {
  const std::string own_name = "leader_endpoint_config.";
  if (auto problem = config.validate()) {
    throw boost::system::system_error(errc::invalid_config, own_name + *problem);
  }
  try {
    client_ = std::make_unique<detail::peer_client>(std::move(executor), peer_config_of(config));
  } catch (const boost::system::system_error& error) {
    // An unreadable file is found by the peer client, which names its own configuration: name
    // the field the caller set instead.
    std::string what = error.what();
    what = what.substr(0, what.rfind(": " + error.code().message()));
    const std::string peer_name = "peer_client_config.";
    if (what.starts_with(peer_name)) what = own_name + what.substr(peer_name.size());
    throw boost::system::system_error(error.code(), what);
  }
}

leader_endpoint_client::~leader_endpoint_client() = default;

void leader_endpoint_client::watch_impl(std::string leader_addr, std::string key_pin,
                                        std::uint64_t term, std::chrono::milliseconds duration,
                                        asio::any_completion_handler<watch_signature> handler) {
  // The erased handler's slot and executor are carried over explicitly: the converter wrapped
  // around it would otherwise hide them, and cancellation would never reach the peer check.
  auto slot = asio::get_associated_cancellation_slot(handler);
  auto executor = asio::get_associated_executor(handler, client_->get_executor());
  const detail::peer_watch watch{duration, term, std::nullopt};
  client_->async_check(
      std::move(leader_addr), std::move(key_pin), watch,
      asio::bind_cancellation_slot(
          slot, asio::bind_executor(executor, answer_converter{std::move(handler), term})));
}

}  // namespace s3lect::inline v1
