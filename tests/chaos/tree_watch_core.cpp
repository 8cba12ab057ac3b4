#include "tree_watch_core.hpp"

#include <algorithm>
#include <cstdio>

namespace s3lect::chaos {

void tree_label::feed(std::string_view bytes) {
  if (complete_ || !problem_.empty()) return;
  const auto newline = bytes.find('\n');
  const std::string_view part = bytes.substr(0, newline);
  if (text_.size() + part.size() > max_size) {
    problem_ = "too long";
    return;
  }
  if (!std::all_of(part.begin(), part.end(), [](char c) { return c >= 0x20 && c < 0x7f; })) {
    problem_ = "not printable";
    return;
  }
  text_.append(part);
  if (newline == std::string_view::npos) return;
  complete_ = true;
  if (text_.empty()) problem_ = "empty";
}

std::optional<std::string> tree_label::label() const {
  if (!complete_ || !problem_.empty()) return std::nullopt;
  return text_;
}

std::string_view tree_label::problem() const {
  if (!problem_.empty()) return problem_;
  return complete_ ? std::string_view{} : "incomplete";
}

std::string tree_end_record(std::string_view label, std::int64_t at_ns) {
  const std::int64_t at_us = (at_ns + 999) / 1000;
  char time[40];
  std::snprintf(time, sizeof time, " %lld.%06lld\n", static_cast<long long>(at_us / 1'000'000),
                static_cast<long long>(at_us % 1'000'000));
  return std::string(label) + time;
}

}  // namespace s3lect::chaos
