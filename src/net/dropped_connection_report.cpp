#include "dropped_connection_report.hpp"

namespace s3lect::inline v1::detail {

namespace {

constexpr const char* kind_names[] = {
    "refused_max_connections", "refused_per_source", "refused_file_descriptors",
    "first_request_timeouts",  "failed_handshakes",
};

}  // namespace

dropped_kind dropped_kind_of(refusal_reason reason) {
  switch (reason) {
    case refusal_reason::max_connections:
      return dropped_kind::refused_max_connections;
    case refusal_reason::per_source:
      return dropped_kind::refused_per_source;
    case refusal_reason::file_descriptors:
      break;
  }
  return dropped_kind::refused_file_descriptors;
}

bool dropped_counts::refusals() const {
  return counts[0] + counts[1] + counts[2] != 0;
}

std::string dropped_counts::describe() const {
  std::string text;
  for (std::size_t i = 0; i < counts.size(); ++i) {
    text += std::string(kind_names[i]) + "=" + std::to_string(counts[i]) + " ";
  }
  return text + "interval_ms=" + std::to_string(interval.count()) + " last_source=" + last_source;
}

std::optional<dropped_counts> dropped_connection_report::count(dropped_kind kind,
                                                               std::string source,
                                                               clock::time_point now) {
  ++held_.counts[static_cast<std::size_t>(kind)];
  held_.last_source = std::move(source);
  holding_ = true;
  if (!last_line_ || now - *last_line_ >= interval_) return take(now);
  return std::nullopt;
}

std::optional<dropped_counts> dropped_connection_report::flush(clock::time_point now, bool force) {
  if (!holding_) return std::nullopt;
  if (!force && now < *flush_at()) return std::nullopt;
  return take(now);
}

std::optional<dropped_connection_report::clock::time_point> dropped_connection_report::flush_at()
    const {
  if (!holding_) return std::nullopt;
  if (!last_line_) return clock::time_point::min();
  return *last_line_ + interval_;
}

dropped_counts dropped_connection_report::take(clock::time_point now) {
  dropped_counts line = std::move(held_);
  line.interval = last_line_
                      ? std::chrono::duration_cast<std::chrono::milliseconds>(now - *last_line_)
                      : std::chrono::milliseconds{0};
  held_ = dropped_counts{};
  holding_ = false;
  last_line_ = now;
  return line;
}

}  // namespace s3lect::inline v1::detail
