// The tree watcher's logic without I/O (docs/chaos.md, "Seeing a job's tree end"). A chaos job
// opens one TCP connection to the watcher before it does anything else and sends one line, its
// label; every process it starts inherits the socket. A signal-killed process logs nothing, but
// the kernel closes the socket when the last holder is gone: the watcher then appends
// `LABEL TIME` to the event log. That time is taken after the end, so it is on the safe side.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace s3lect::chaos {

/// What one connection sent before it closed: its label, once a whole line came.
class tree_label {
 public:
  /// Longest label accepted: a slot prefix, `treeend`, a node, a term and a pid fit many times.
  static constexpr std::size_t max_size = 200;

  /// Takes bytes the connection sent. Bytes after the first newline are ignored (a job has
  /// nothing more to say); a label that is too long or not printable ASCII makes it bad.
  void feed(std::string_view bytes);
  /// The label, once its line is complete and good.
  std::optional<std::string> label() const;
  /// Why the label cannot be recorded ("empty", "incomplete", "too long", "not printable").
  std::string_view problem() const;

 private:
  std::string text_;
  bool complete_ = false;
  std::string_view problem_;
};

/// The record for a tree whose last process was gone by `at_ns` (ns since the epoch): the label,
/// the time in seconds with six decimals rounded up (never earlier than the end), a newline.
std::string tree_end_record(std::string_view label, std::int64_t at_ns);

}  // namespace s3lect::chaos
