// s3lect_tree_watch: sees when a chaos job's whole process tree is gone, from outside the tree.
//
//   s3lect_tree_watch --log EVENTS_LOG [--listen [127.0.0.1:]PORT]
//
// prints `listen 127.0.0.1:PORT` and `ready` on stdout. Each job connects first thing and sends
// one line (its label, e.g. `treeend node1 7 12345`); every process it starts inherits the
// socket. When the last of them is gone the kernel closes the connection and the watcher appends
// `LABEL TIME` to EVENTS_LOG in one write (O_APPEND, like every other writer of the log), TIME
// being $EPOCHREALTIME-style seconds taken after the close was seen. tree_watch_core.hpp says
// why this is on the safe side. SIGINT or SIGTERM ends it: it first waits up to 2 s for the
// connections still open, names those left on stderr and then exits 1 (0 when none were left).
//
// One thread and poll(2), no Asio: it only accepts, reads a line and sees end of file, and
// should wake at once when a tree ends (chaos.sh runs it at a real-time priority when it can).
#include "command_line.hpp"
#include "tree_watch_core.hpp"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <cstring>
#include <ctime>
#include <iostream>
#include <stdexcept>
#include <string>
#include <vector>

namespace {

const char* usage =
    "usage: s3lect_tree_watch --log EVENTS_LOG [--listen [127.0.0.1:]PORT]\n"
    "  --log      the event log to append `LABEL TIME` to when a connection closes\n"
    "  --listen   where to listen (port 0, the default: any free port); loopback only\n"
    "Prints `listen ADDR` and `ready`. A job sends one line (its label) and keeps the\n"
    "connection open in every process of its tree. SIGINT/SIGTERM end it.\n";

volatile std::sig_atomic_t stopping = 0;

void on_signal(int) {
  stopping = 1;
}

/// The signal mask to poll with: SIGINT and SIGTERM are blocked everywhere else, so that one
/// arriving just before ppoll interrupts it rather than waiting for the next event.
sigset_t poll_mask;

std::int64_t now_ns() {
  timespec ts{};
  clock_gettime(CLOCK_REALTIME, &ts);
  return static_cast<std::int64_t>(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec;
}

[[noreturn]] void fail(const std::string& what) {
  throw std::runtime_error(what + ": " + std::strerror(errno));
}

unsigned short parse_port(std::string text) {
  if (const auto colon = text.rfind(':'); colon != std::string::npos) {
    if (text.substr(0, colon) != "127.0.0.1") throw std::invalid_argument("loopback only");
    text = text.substr(colon + 1);
  }
  std::size_t used = 0;
  const unsigned long port = std::stoul(text, &used);
  if (used != text.size() || port > 65535) throw std::invalid_argument("bad port " + text);
  return static_cast<unsigned short>(port);
}

int listen_on(unsigned short port) {
  const int fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (fd < 0) fail("socket");
  const int on = 1;
  setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &on, sizeof on);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_port = htons(port);
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (bind(fd, reinterpret_cast<sockaddr*>(&address), sizeof address) != 0) fail("bind");
  if (listen(fd, SOMAXCONN) != 0) fail("listen");
  socklen_t size = sizeof address;
  if (getsockname(fd, reinterpret_cast<sockaddr*>(&address), &size) != 0) fail("getsockname");
  std::cout << "listen 127.0.0.1:" << ntohs(address.sin_port) << "\n";
  return fd;
}

struct tree {
  int fd = -1;
  s3lect::chaos::tree_label label;
};

class watcher {
 public:
  watcher(int listener, int log) : listener_(listener), log_(log) {}

  /// Serves until a signal, then waits up to 2 s for the open connections; false if any remain.
  bool run() {
    bool draining = false;
    timespec drain_deadline{};
    while (true) {
      if (stopping && !draining) {
        draining = true;
        close(listener_);
        clock_gettime(CLOCK_MONOTONIC, &drain_deadline);
        drain_deadline.tv_sec += 2;
      }
      timespec left{};
      if (draining) {
        if (trees_.empty()) return true;
        timespec now{};
        clock_gettime(CLOCK_MONOTONIC, &now);
        const long long left_ns = (drain_deadline.tv_sec - now.tv_sec) * 1'000'000'000LL +
                                  (drain_deadline.tv_nsec - now.tv_nsec);
        if (left_ns <= 0) break;
        left.tv_sec = static_cast<time_t>(left_ns / 1'000'000'000);
        left.tv_nsec = static_cast<long>(left_ns % 1'000'000'000);
      }
      std::vector<pollfd> fds;
      if (!draining) fds.push_back({listener_, POLLIN, 0});
      for (const auto& t : trees_) fds.push_back({t.fd, POLLIN, 0});
      if (ppoll(fds.data(), fds.size(), draining ? &left : nullptr, &poll_mask) < 0) {
        if (errno == EINTR) continue;  // a signal: the loop starts draining
        fail("ppoll");
      }
      // Backwards, so that forgetting a closed connection keeps the others' indices.
      const std::size_t first_tree = draining ? 0 : 1;
      for (std::size_t i = fds.size(); i-- > first_tree;) {
        if (fds[i].revents != 0) serve(i - first_tree);
      }
      if (!draining && (fds[0].revents & POLLIN)) accept_all();
    }
    for (const auto& t : trees_) {
      std::cerr << "s3lect_tree_watch: still open at exit: "
                << t.label.label().value_or("(no label)") << "\n";
    }
    return false;
  }

 private:
  void accept_all() {
    while (true) {
      const int fd = accept4(listener_, nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC);
      if (fd < 0) {
        if (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR) return;
        if (errno == ECONNABORTED) continue;
        fail("accept");
      }
      trees_.push_back({fd, {}});
    }
  }

  /// Reads what connection `index` has; on its end, records it and forgets it.
  void serve(std::size_t index) {
    char buffer[512];
    while (true) {
      const ssize_t n = read(trees_[index].fd, buffer, sizeof buffer);
      if (n > 0) {
        trees_[index].label.feed(std::string_view(buffer, static_cast<std::size_t>(n)));
        continue;
      }
      if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return;
      if (n < 0 && errno == EINTR) continue;
      break;  // end of file, or reset: either way no process holds the socket any more
    }
    const std::int64_t at = now_ns();
    tree& t = trees_[index];
    if (const auto label = t.label.label()) {
      const std::string record = s3lect::chaos::tree_end_record(*label, at);
      const ssize_t written = write(log_, record.data(), record.size());
      if (written != static_cast<ssize_t>(record.size())) fail("write to the event log");
    } else {
      std::cerr << "s3lect_tree_watch: a connection closed with its label " << t.label.problem()
                << "\n";
    }
    close(t.fd);
    trees_.erase(trees_.begin() + static_cast<std::ptrdiff_t>(index));
  }

  int listener_;
  int log_;
  std::vector<tree> trees_;
};

}  // namespace

int main(int argc, char** argv) {
  try {
    std::string log_path;
    unsigned short port = 0;
    const auto take = [&](const std::string& arg, const std::string& value) {
      if (arg == "--log") {
        log_path = value;
      } else if (arg == "--listen") {
        port = parse_port(value);
      } else {
        throw std::invalid_argument("unknown option " + arg);
      }
    };
    if (!s3lect::chaos::read_option_pairs(argc, argv, usage, take)) return 0;
    if (log_path.empty()) throw std::invalid_argument("--log is required");
    const int log = open(log_path.c_str(), O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
    if (log < 0) fail("open " + log_path);
    sigset_t blocked;
    sigemptyset(&blocked);
    sigaddset(&blocked, SIGTERM);
    sigaddset(&blocked, SIGINT);
    sigprocmask(SIG_BLOCK, &blocked, &poll_mask);
    sigdelset(&poll_mask, SIGTERM);
    sigdelset(&poll_mask, SIGINT);
    struct sigaction action {};
    action.sa_handler = on_signal;
    sigaction(SIGTERM, &action, nullptr);
    sigaction(SIGINT, &action, nullptr);
    std::signal(SIGPIPE, SIG_IGN);
    watcher w(listen_on(port), log);
    std::cout << "ready" << std::endl;
    return w.run() ? 0 : 1;
  } catch (const std::invalid_argument& e) {
    std::cerr << "s3lect_tree_watch: " << e.what() << "\n" << usage;
    return 2;
  } catch (const std::exception& e) {
    std::cerr << "s3lect_tree_watch: " << e.what() << "\n";
    return 2;
  }
}
