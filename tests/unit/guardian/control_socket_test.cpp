// The control socket's framing (control_socket.hpp), which must keep SOCK_SEQPACKET's guarantees
// on a byte stream: whole messages however the stream is cut into reads, never one cut short by
// the end of file, frames left whole by a full socket; and no SIGPIPE from a closed one.
#include "guardian/control_socket.hpp"

#include "guardian/protocol.hpp"

#include <gtest/gtest.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <string>
#include <utility>
#include <vector>

namespace {

namespace guardian = s3lect::guardian;
using guardian::control_framing;

/// Everything `reader` can give now.
std::vector<std::string> all_messages(guardian::control_reader& reader) {
  std::vector<std::string> out;
  while (auto message = reader.next()) out.push_back(*message);
  return out;
}

/// Reads what `fd` holds now (it is non-blocking) into `reader`; false at end of file.
bool drain(int fd, guardian::control_reader& reader) {
  char bytes[guardian::max_packet];
  for (;;) {
    const ssize_t got = ::recv(fd, bytes, sizeof bytes, MSG_DONTWAIT);
    if (got == 0) return false;
    if (got < 0) return errno == EAGAIN;
    reader.add(std::string_view(bytes, static_cast<std::size_t>(got)));
  }
}

/// A message of `size` bytes that says which it is.
std::string numbered(int number, std::size_t size) {
  std::string message = "until " + std::to_string(number) + " ";
  message.resize(size, 'x');
  return message;
}

TEST(ControlFraming, AMessageSplitOverManyReadsComesOutWholeOnce) {
  guardian::control_reader reader(control_framing::length_prefixed);
  const std::string frame = guardian::control_frame("kill", control_framing::length_prefixed);
  ASSERT_EQ(frame.size(), 6U);
  for (std::size_t i = 0; i + 1 < frame.size(); ++i) {
    reader.add(frame.substr(i, 1));
    EXPECT_FALSE(reader.next()) << "after byte " << i;
  }
  reader.add(frame.substr(frame.size() - 1));
  EXPECT_EQ(all_messages(reader), std::vector<std::string>{"kill"});
}

TEST(ControlFraming, SeveralMessagesInOneReadComeOutInOrder) {
  guardian::control_reader reader(control_framing::length_prefixed);
  const std::string long_one(guardian::max_packet, 'n');
  std::string read;
  for (const std::string message : {"bye", "", "signal 1", long_one.c_str()}) {
    read += guardian::control_frame(message, control_framing::length_prefixed);
  }
  const std::string half = guardian::control_frame("stop 5", control_framing::length_prefixed);
  read += half.substr(0, 3);
  reader.add(read);
  EXPECT_EQ(all_messages(reader), (std::vector<std::string>{"bye", "", "signal 1", long_one}));
  reader.add(half.substr(3));
  EXPECT_EQ(all_messages(reader), std::vector<std::string>{"stop 5"});
}

TEST(ControlFraming, AMessageCutShortByTheEndOfFileIsNeverGiven) {
  int pair[2];
  ASSERT_EQ(::socketpair(AF_UNIX, SOCK_STREAM, 0, pair), 0);
  const std::string frame =
      guardian::control_frame("until 5 7 abc", control_framing::length_prefixed);
  const std::string sent = guardian::control_frame("kill", control_framing::length_prefixed) +
                           frame.substr(0, frame.size() - 1);
  ASSERT_EQ(::send(pair[1], sent.data(), sent.size(), 0), static_cast<ssize_t>(sent.size()));
  ::close(pair[1]);
  guardian::control_reader reader(control_framing::length_prefixed);
  EXPECT_FALSE(drain(pair[0], reader)) << "the end of file is seen";
  EXPECT_EQ(all_messages(reader), std::vector<std::string>{"kill"});
  EXPECT_FALSE(reader.broken());
  ::close(pair[0]);
}

TEST(ControlFraming, ALengthBeyondTheLargestMessageBreaksTheStream) {
  guardian::control_reader reader(control_framing::length_prefixed);
  const std::string too_long(guardian::max_packet + 1, 'x');
  reader.add(guardian::control_frame(too_long, control_framing::length_prefixed));
  EXPECT_FALSE(reader.next());
  EXPECT_TRUE(reader.broken());
  reader.add(guardian::control_frame("kill", control_framing::length_prefixed));
  EXPECT_FALSE(reader.next()) << "nothing after a broken frame can be trusted";
}

TEST(ControlFraming, EachPacketIsOneMessageWhateverItsBytes) {
  guardian::control_reader reader(control_framing::packets);
  EXPECT_EQ(guardian::control_frame("kill", control_framing::packets), "kill");
  reader.add(std::string("\xff\xff", 2));
  reader.add("");
  reader.add("bye");
  EXPECT_EQ(all_messages(reader),
            (std::vector<std::string>{std::string("\xff\xff", 2), "", "bye"}));
  EXPECT_FALSE(reader.broken());
}

/// A TCP connection on the loopback interface with the smallest buffers: unlike a Unix stream
/// socket on Linux, it takes part of a write when it is nearly full.
std::pair<int, int> small_loopback_connection() {
  const int listener = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t length = sizeof address;
  EXPECT_EQ(::bind(listener, reinterpret_cast<sockaddr*>(&address), sizeof address), 0);
  EXPECT_EQ(::listen(listener, 1), 0);
  EXPECT_EQ(::getsockname(listener, reinterpret_cast<sockaddr*>(&address), &length), 0);
  const int smallest = 1;  // the system rounds it up to its minimum
  const int sender = ::socket(AF_INET, SOCK_STREAM, 0);
  ::setsockopt(sender, SOL_SOCKET, SO_SNDBUF, &smallest, sizeof smallest);
  EXPECT_EQ(::connect(sender, reinterpret_cast<sockaddr*>(&address), sizeof address), 0);
  const int receiver = ::accept(listener, nullptr, nullptr);
  ::setsockopt(receiver, SOL_SOCKET, SO_RCVBUF, &smallest, sizeof smallest);
  ::close(listener);
  return {sender, receiver};
}

/// Reads from `fd` into `reader` until `messages` holds `count` messages; false on timeout.
bool receive_messages(int fd, guardian::control_reader& reader, std::vector<std::string>& messages,
                      std::size_t count) {
  for (;;) {
    while (auto message = reader.next()) messages.push_back(*message);
    if (messages.size() >= count) return true;
    pollfd readable{fd, POLLIN, 0};
    if (::poll(&readable, 1, 5000) != 1 || !drain(fd, reader)) return false;
  }
}

// A nearly full stream takes part of a frame: the writer must finish it before another, and must
// never send later a message it reported refused whole.
TEST(ControlWriter, AFullStreamKeepsEveryFrameWholeAndInOrder) {
  const auto [sender, receiver] = small_loopback_connection();
  guardian::control_writer writer(control_framing::length_prefixed);
  guardian::control_reader reader(control_framing::length_prefixed);
  const std::size_t size = 3000;
  std::vector<std::string> accepted;
  int number = 0;
  int refused = 0;
  while (refused < 3 && number < 100'000) {
    const std::string message = numbered(number++, size);
    if (writer.send(sender, message)) {
      accepted.push_back(message);
    } else {
      ++refused;
    }
  }
  ASSERT_EQ(refused, 3) << "the socket never filled";
  std::vector<std::string> received;
  ASSERT_TRUE(receive_messages(receiver, reader, received, accepted.size()));
  const std::string last = numbered(number, size);
  ASSERT_TRUE(writer.send(sender, last));
  ASSERT_TRUE(receive_messages(receiver, reader, received, accepted.size() + 1));
  if (received.back() != last) {
    ASSERT_TRUE(receive_messages(receiver, reader, received, accepted.size() + 2));
  }
  // What was accepted, in order; then the one refused message that went in part, finished
  // before the last; then the last. Never a message refused whole, never a garbled one.
  ASSERT_EQ(received.size(), accepted.size() + 2) << "no write was cut short";
  EXPECT_TRUE(std::equal(accepted.begin(), accepted.end(), received.begin()));
  EXPECT_EQ(received[accepted.size()], numbered(static_cast<int>(accepted.size()), size));
  EXPECT_EQ(received.back(), last);
  EXPECT_FALSE(reader.broken());
  ::close(sender);
  ::close(receiver);
}

TEST(ControlSocket, WritingToAClosedPeerFailsWithoutSigpipe) {
  int pair[2];
  ASSERT_TRUE(guardian::open_control_pair(pair));
  ::close(pair[1]);
  sigset_t before;
  ::pthread_sigmask(SIG_SETMASK, nullptr, &before);
  // SIGPIPE's default action would end this test program.
  EXPECT_FALSE(guardian::send_control_message(pair[0], "kill"));
  EXPECT_EQ(errno, EPIPE);
  guardian::control_writer writer;
  EXPECT_FALSE(writer.send(pair[0], "bye"));
  sigset_t after;
  ::pthread_sigmask(SIG_SETMASK, nullptr, &after);
  EXPECT_EQ(::sigismember(&after, SIGPIPE), ::sigismember(&before, SIGPIPE)) << "mask restored";
  sigset_t pending;
  ::sigpending(&pending);
  EXPECT_EQ(::sigismember(&pending, SIGPIPE), 0) << "no SIGPIPE left for later";
  ::close(pair[0]);
}

TEST(ControlSocket, CarriesMessagesBothWaysWithThisBuildsFraming) {
  int pair[2];
  ASSERT_TRUE(guardian::open_control_pair(pair));
  int type = 0;
  socklen_t length = sizeof type;
  ASSERT_EQ(::getsockopt(pair[0], SOL_SOCKET, SO_TYPE, &type, &length), 0);
  EXPECT_EQ(type, s3lect::detail::linux_facilities ? SOCK_SEQPACKET : SOCK_STREAM);
  guardian::control_writer writer;
  ASSERT_TRUE(writer.send(pair[0], "until 1 2 n"));
  ASSERT_TRUE(guardian::send_control_message(pair[0], "bye"));
  ASSERT_TRUE(guardian::send_control_message(pair[1], "started 12 guardian"));
  guardian::control_reader at_guardian;
  guardian::control_reader at_s3lect;
  ASSERT_TRUE(drain(pair[1], at_guardian));
  ASSERT_TRUE(drain(pair[0], at_s3lect));
  EXPECT_EQ(all_messages(at_guardian), (std::vector<std::string>{"until 1 2 n", "bye"}));
  EXPECT_EQ(all_messages(at_s3lect), std::vector<std::string>{"started 12 guardian"});
  ::close(pair[1]);
  EXPECT_FALSE(drain(pair[0], at_s3lect)) << "end of file when the other side is gone";
  ::close(pair[0]);
}

}  // namespace
