#include "guardian/control_socket.hpp"

#include "guardian/cloexec.hpp"
#include "guardian/protocol.hpp"

#include <signal.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>

// How a write to a closed socket is kept from raising SIGPIPE: the send flag where the system
// has it (Linux, FreeBSD), else the socket option (macOS), else SIGPIPE held blocked during the
// write (the portable fallbacks' build on Linux, which has neither of the others then).
#if defined(MSG_NOSIGNAL) && !defined(S3LECT_PORTABLE_FALLBACKS)
#define S3LECT_NOSIGPIPE_FLAG 1
#elif defined(SO_NOSIGPIPE)
#define S3LECT_NOSIGPIPE_OPTION 1
#endif

namespace s3lect::guardian {
namespace {

constexpr std::size_t length_bytes = 2;
static_assert(max_packet < (1U << (8 * length_bytes)), "a frame's length must fit its prefix");

#if !defined(S3LECT_NOSIGPIPE_FLAG) && !defined(S3LECT_NOSIGPIPE_OPTION)

/// SIGPIPE blocked in this thread while it lives. A SIGPIPE raised meanwhile (by a write to a
/// closed socket, which is directed at the writing thread) is taken off the pending set before
/// the mask is restored, unless one was pending already.
class sigpipe_held {
 public:
  sigpipe_held() {
    ::sigemptyset(&pipe_);
    ::sigaddset(&pipe_, SIGPIPE);
    ::pthread_sigmask(SIG_BLOCK, &pipe_, &saved_);
    was_pending_ = pending();
  }
  ~sigpipe_held() {
    const int error = errno;
    if (!was_pending_ && pending()) {
      int taken = 0;
      ::sigwait(&pipe_, &taken);
    }
    ::pthread_sigmask(SIG_SETMASK, &saved_, nullptr);
    errno = error;
  }
  sigpipe_held(const sigpipe_held&) = delete;
  sigpipe_held& operator=(const sigpipe_held&) = delete;

 private:
  static bool pending() {
    sigset_t set;
    ::sigpending(&set);
    return ::sigismember(&set, SIGPIPE) == 1;
  }

  sigset_t pipe_{};
  sigset_t saved_{};
  bool was_pending_ = false;
};

#endif

}  // namespace

bool open_control_pair(int (&fds)[2]) {
  const int type = native_framing == control_framing::packets ? SOCK_SEQPACKET : SOCK_STREAM;
  if (!open_cloexec_socketpair(type, fds)) return false;
#if defined(S3LECT_NOSIGPIPE_OPTION)
  const int on = 1;
  for (const int fd : fds) {
    if (::setsockopt(fd, SOL_SOCKET, SO_NOSIGPIPE, &on, sizeof on) != 0) {
      const int error = errno;
      ::close(fds[0]);
      ::close(fds[1]);
      errno = error;
      return false;
    }
  }
#endif
  return true;
}

ssize_t send_without_sigpipe(int fd, const void* data, std::size_t size, int flags) {
#if defined(S3LECT_NOSIGPIPE_FLAG)
  return ::send(fd, data, size, flags | MSG_NOSIGNAL);
#elif defined(S3LECT_NOSIGPIPE_OPTION)
  return ::send(fd, data, size, flags);
#else
  const sigpipe_held held;
  return ::send(fd, data, size, flags);
#endif
}

std::string control_frame(std::string_view message, control_framing framing) {
  if (framing == control_framing::packets) return std::string(message);
  std::string frame;
  frame.reserve(length_bytes + message.size());
  frame.push_back(static_cast<char>((message.size() >> 8) & 0xff));
  frame.push_back(static_cast<char>(message.size() & 0xff));
  frame.append(message);
  return frame;
}

bool send_control_message(int fd, std::string_view message) {
  const std::string frame = control_frame(message);
  std::string_view rest = frame;
  while (!rest.empty()) {
    const ssize_t put = send_without_sigpipe(fd, rest.data(), rest.size(), 0);
    if (put < 0 && errno == EINTR) continue;
    if (put <= 0) return false;
    rest.remove_prefix(static_cast<std::size_t>(put));
  }
  return true;
}

bool control_writer::send(int fd, std::string_view message) {
  if (!finish_frame(fd)) return false;
  unsent_ = control_frame(message, framing_);
  const std::size_t whole = unsent_.size();
  if (finish_frame(fd)) return true;
  // Refused whole, as a full SOCK_SEQPACKET socket refuses a packet: dropped, not sent later.
  if (unsent_.size() == whole) unsent_.clear();
  return false;
}

bool control_writer::finish_frame(int fd) {
  while (!unsent_.empty()) {
    const ssize_t put = send_without_sigpipe(fd, unsent_.data(), unsent_.size(), MSG_DONTWAIT);
    if (put < 0 && errno == EINTR) continue;
    if (put <= 0) return false;
    unsent_.erase(0, static_cast<std::size_t>(put));
  }
  return true;
}

void control_reader::add(std::string_view bytes) {
  if (framing_ == control_framing::packets) {
    // A packet is a message: framed here so that next() reads both kinds alike.
    buffered_ += control_frame(bytes.substr(0, max_packet), control_framing::length_prefixed);
  } else {
    buffered_.append(bytes);
  }
}

std::optional<std::string> control_reader::next() {
  if (broken_ || buffered_.size() < length_bytes) return std::nullopt;
  const std::size_t length =
      (static_cast<std::size_t>(static_cast<unsigned char>(buffered_[0])) << 8) |
      static_cast<unsigned char>(buffered_[1]);
  if (length > max_packet) {
    broken_ = true;
    return std::nullopt;
  }
  if (buffered_.size() < length_bytes + length) return std::nullopt;
  std::string message = buffered_.substr(length_bytes, length);
  buffered_.erase(0, length_bytes + length);
  return message;
}

}  // namespace s3lect::guardian
