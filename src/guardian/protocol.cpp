#include "guardian/protocol.hpp"

#include <charconv>
#include <vector>

namespace s3lect::guardian {
namespace {

/// Splits `packet` at single spaces into at most `fields` words, the last one taking the rest.
std::vector<std::string_view> words(std::string_view packet, std::size_t fields) {
  std::vector<std::string_view> out;
  while (!packet.empty() && out.size() + 1 < fields) {
    const auto space = packet.find(' ');
    out.push_back(packet.substr(0, space));
    if (space == std::string_view::npos) return out;
    packet.remove_prefix(space + 1);
  }
  if (!packet.empty()) out.push_back(packet);
  return out;
}

template <class Number>
std::optional<Number> number(std::string_view text) {
  Number value{};
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc{} || end != text.data() + text.size() || text.empty()) return std::nullopt;
  return value;
}

/// A word without spaces or control characters: nonces, steps, isolation names.
bool plain_word(std::string_view text) {
  for (const char c : text) {
    if (static_cast<unsigned char>(c) <= ' ' || c == 0x7f) return false;
  }
  return !text.empty();
}

std::optional<end_cause> cause_named(std::string_view name) {
  for (const auto cause :
       {end_cause::exited, end_cause::stopped, end_cause::killed, end_cause::deadline}) {
    if (cause_name(cause) == name) return cause;
  }
  return std::nullopt;
}

std::optional<to_guardian> decode_until(const std::vector<std::string_view>& w) {
  if (w.size() != 4 || !plain_word(w[3])) return std::nullopt;
  const auto boot_ns = number<std::int64_t>(w[1]);
  const auto term = number<std::uint64_t>(w[2]);
  if (!boot_ns || !term) return std::nullopt;
  return lead_until{*boot_ns, *term, std::string(w[3])};
}

std::optional<from_guardian> decode_started(const std::vector<std::string_view>& w) {
  if (w.size() < 3 || w.size() > 4 || !plain_word(w[2])) return std::nullopt;
  const auto pid = number<pid_t>(w[1]);
  if (!pid || *pid <= 0) return std::nullopt;
  return job_started{*pid, std::string(w[2]), w.size() == 4 ? std::string(w[3]) : std::string()};
}

std::optional<from_guardian> decode_ended(const std::vector<std::string_view>& w) {
  if (w.size() != 4) return std::nullopt;
  const auto status = number<int>(w[1]);
  const auto cause = cause_named(w[2]);
  const auto leftovers = number<unsigned>(w[3]);
  if (!status || !cause || !leftovers) return std::nullopt;
  return job_ended{*status, *cause, *leftovers};
}

struct to_guardian_encoder {
  std::string operator()(const lead_until& m) const {
    return "until " + std::to_string(m.boot_ns) + " " + std::to_string(m.term) + " " + m.nonce;
  }
  std::string operator()(const forward_signal& m) const {
    return "signal " + std::to_string(m.signal);
  }
  std::string operator()(const stop_job& m) const { return "stop " + std::to_string(m.grace_ms); }
  std::string operator()(const kill_job&) const { return "kill"; }
  std::string operator()(const farewell&) const { return "bye"; }
};

struct from_guardian_encoder {
  std::string operator()(const job_started& m) const {
    return "started " + std::to_string(m.pid) + " " + m.isolation +
           (m.cgroup.empty() ? "" : " " + m.cgroup);
  }
  std::string operator()(const job_failed& m) const {
    return "failed " + std::to_string(m.error) + " " + m.step;
  }
  std::string operator()(const job_ended& m) const {
    return "ended " + std::to_string(m.status) + " " + std::string(cause_name(m.cause)) + " " +
           std::to_string(m.leftovers);
  }
};

}  // namespace

std::string_view cause_name(end_cause cause) {
  switch (cause) {
    case end_cause::exited:
      return "exited";
    case end_cause::stopped:
      return "stopped";
    case end_cause::killed:
      return "killed";
    case end_cause::deadline:
      return "deadline";
  }
  return "exited";
}

std::string encode(const to_guardian& message) {
  return std::visit(to_guardian_encoder{}, message);
}

std::string encode(const from_guardian& message) {
  return std::visit(from_guardian_encoder{}, message);
}

std::optional<to_guardian> decode_to_guardian(std::string_view packet) {
  const auto w = words(packet, 4);
  if (w.empty()) return std::nullopt;
  if (w[0] == "until") return decode_until(w);
  if (w[0] == "signal" && w.size() == 2) {
    const auto signal = number<int>(w[1]);
    if (signal && *signal > 0 && *signal < 65) return forward_signal{*signal};
    return std::nullopt;
  }
  if (w[0] == "stop" && w.size() == 2) {
    const auto grace = number<std::int64_t>(w[1]);
    if (grace && *grace >= 0) return stop_job{*grace};
    return std::nullopt;
  }
  if (w.size() == 1 && w[0] == "kill") return kill_job{};
  if (w.size() == 1 && w[0] == "bye") return farewell{};
  return std::nullopt;
}

std::optional<from_guardian> decode_from_guardian(std::string_view packet) {
  const auto w = words(packet, 4);
  if (w.empty()) return std::nullopt;
  if (w[0] == "started") return decode_started(w);
  if (w[0] == "failed" && w.size() == 3 && plain_word(w[2])) {
    const auto error = number<int>(w[1]);
    if (error) return job_failed{*error, std::string(w[2])};
    return std::nullopt;
  }
  if (w[0] == "ended") return decode_ended(w);
  return std::nullopt;
}

}  // namespace s3lect::guardian
