// Splitting a fuzz target's input into the fields it describes: lines, and numbers within one.
#pragma once

#include <charconv>
#include <cstddef>
#include <string_view>
#include <system_error>

namespace s3lect::fuzz {

/// The next line of `input` (without its '\n'), or all the rest when `last`.
inline std::string_view next_field(std::string_view& input, bool last = false) {
  const auto newline = last ? std::string_view::npos : input.find('\n');
  const std::string_view field = input.substr(0, newline);
  input = newline == std::string_view::npos ? std::string_view{} : input.substr(newline + 1);
  return field;
}

/// The next space-separated decimal number of `words`, or `fallback` where there is none.
template <class Integer>
Integer next_number(std::string_view& words, Integer fallback = Integer{}) {
  while (words.starts_with(' ')) words.remove_prefix(1);
  Integer value{};
  const auto [end, ec] = std::from_chars(words.data(), words.data() + words.size(), value);
  words.remove_prefix(static_cast<std::size_t>(end - words.data()));
  return ec == std::errc{} ? value : fallback;
}

}  // namespace s3lect::fuzz
