// The control socket between `s3lect run` and its guardian (the messages: protocol.hpp).
//
// On Linux it is a Unix SOCK_SEQPACKET pair: one message per packet, sent whole or not at all,
// read whole. macOS has no SOCK_SEQPACKET, so elsewhere (and in a build with
// S3LECT_PORTABLE_FALLBACKS) it is a SOCK_STREAM pair carrying each message as a frame: its
// length in two bytes, most significant first, then the message. The same guarantees hold:
//   - boundaries: control_reader gives back whole messages, however the stream was cut into
//     reads (several messages in one read, one message over several reads);
//   - no partial message: a message cut short by the sender's end is never delivered, and
//     control_writer finishes a partly written frame before it starts another, so the frames
//     on the stream stay whole and in order;
//   - end of file when the other process is gone, on either kind of socket alike.
// Writing to a closed socket never raises SIGPIPE: MSG_NOSIGNAL on Linux; elsewhere
// SO_NOSIGPIPE where the system has it, else SIGPIPE held blocked during the write.
#pragma once

#include "base/platform.hpp"

#include <sys/types.h>

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

namespace s3lect::guardian {

/// How messages are delimited on the control socket.
enum class control_framing {
  packets,         ///< One message per SOCK_SEQPACKET packet.
  length_prefixed  ///< A SOCK_STREAM of frames: two bytes of length, then the message.
};

/// The framing of this build's control socket.
inline constexpr control_framing native_framing =
    S3LECT_LINUX_FACILITIES ? control_framing::packets : control_framing::length_prefixed;

/// The control socket pair, both ends close-on-exec and, where the system needs it, never
/// raising SIGPIPE. false with errno set.
bool open_control_pair(int (&fds)[2]);

/// send(2) that never raises SIGPIPE: a closed socket gives EPIPE instead.
ssize_t send_without_sigpipe(int fd, const void* data, std::size_t size, int flags);

/// The bytes that carry `message` on a socket of `framing`. `message` is at most max_packet
/// bytes long (protocol.hpp).
std::string control_frame(std::string_view message, control_framing framing = native_framing);

/// Sends `message` whole on a blocking control socket, finishing a write cut short by a signal.
/// false when the socket failed (the other process is gone).
bool send_control_message(int fd, std::string_view message);

/// Sends messages on a non-blocking control socket without ever waiting.
class control_writer {
 public:
  explicit control_writer(control_framing framing = native_framing) : framing_(framing) {}

  /// Sends `message` now. false when it could not be sent whole at once: the socket failed, or
  /// is full (the reader is stuck). A frame the stream took only part of is finished, before
  /// anything else, by the next send: the reader never sees half a message followed by another.
  bool send(int fd, std::string_view message);

 private:
  /// Writes what is left of the last frame; true when nothing is left.
  bool finish_frame(int fd);

  control_framing framing_;
  std::string unsent_;
};

/// Reassembles the messages read from a control socket.
class control_reader {
 public:
  explicit control_reader(control_framing framing = native_framing) : framing_(framing) {}

  /// Takes what one read returned: one packet, or any piece of the stream.
  void add(std::string_view bytes);

  /// The next whole message, once all its bytes have arrived.
  std::optional<std::string> next();

  /// True once a frame said it is longer than max_packet: the stream was not written by the
  /// other side's control_writer and cannot be followed further. Treat as end of file.
  bool broken() const noexcept { return broken_; }

 private:
  control_framing framing_;
  std::string buffered_;
  bool broken_ = false;
};

}  // namespace s3lect::guardian
