#include "guardian/process_table.hpp"

#include "base/platform.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <unistd.h>
#if S3LECT_LINUX_FACILITIES
#include <sys/syscall.h>
#endif

#include <cerrno>
#include <charconv>
#include <string>
#include <string_view>
#include <unordered_map>

namespace s3lect::guardian {
namespace {

int send_through_pidfd(int pidfd, int signal) {
#if S3LECT_LINUX_FACILITIES && defined(SYS_pidfd_send_signal)
  return static_cast<int>(::syscall(SYS_pidfd_send_signal, pidfd, signal, nullptr, 0));
#else
  (void)pidfd;
  (void)signal;
  errno = ENOSYS;
  return -1;
#endif
}

/// The whole content of a small /proc file, or empty.
std::string read_small_file(const char* path) {
  const int fd = ::open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return {};
  std::string text;
  char buffer[1024];
  for (;;) {
    const ssize_t got = ::read(fd, buffer, sizeof buffer);
    if (got < 0 && errno == EINTR) continue;
    if (got <= 0) break;
    text.append(buffer, static_cast<std::size_t>(got));
  }
  ::close(fd);
  return text;
}

/// The `index`-th space-separated field of `fields` (0 = the first), parsed as a number.
template <class Number>
std::optional<Number> field(std::string_view fields, int index) {
  for (int i = 0; i < index; ++i) {
    const auto space = fields.find(' ');
    if (space == std::string_view::npos) return std::nullopt;
    fields.remove_prefix(space + 1);
  }
  Number value{};
  const auto [end, ec] = std::from_chars(fields.data(), fields.data() + fields.size(), value);
  if (ec != std::errc{} || end == fields.data()) return std::nullopt;
  return value;
}

}  // namespace

int open_pidfd(pid_t pid) {
#if S3LECT_LINUX_FACILITIES && defined(SYS_pidfd_open)
  return static_cast<int>(::syscall(SYS_pidfd_open, pid, 0));
#else
  (void)pid;
  errno = ENOSYS;
  return -1;
#endif
}

std::optional<process_info> parse_process_stat(std::string_view text) {
  // "PID (COMM) STATE PPID ..." where COMM may hold spaces and parentheses: it ends at the last
  // ')'. STATE is then field 3 of proc(5), PPID field 4 and the start time field 22.
  const auto close = text.rfind(')');
  if (close == std::string_view::npos || close + 4 > text.size()) return std::nullopt;
  process_info info;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), info.pid);
  if (ec != std::errc{} || end == text.data()) return std::nullopt;
  const std::string_view rest = text.substr(close + 2);  // "STATE PPID ..."
  info.state = rest[0];
  const auto parent = field<pid_t>(rest, 1);
  const auto start = field<std::uint64_t>(rest, 19);
  if (!parent || !start) return std::nullopt;
  info.parent = *parent;
  info.start_time = *start;
  return info;
}

std::optional<process_info> read_process(pid_t pid) {
  const std::string path = "/proc/" + std::to_string(pid) + "/stat";
  return parse_process_stat(read_small_file(path.c_str()));
}

std::optional<pid_t> innermost_pid(pid_t pid) {
  const std::string path = "/proc/" + std::to_string(pid) + "/status";
  const std::string status = read_small_file(path.c_str());
  const auto at = status.find("\nNSpid:");
  if (at == std::string::npos) return std::nullopt;
  const auto end = status.find('\n', at + 1);
  std::string_view line(status.data() + at + 7,
                        (end == std::string::npos ? status.size() : end) - (at + 7));
  while (!line.empty() && (line.back() == ' ' || line.back() == '\t')) line.remove_suffix(1);
  const auto last = line.find_last_of(" \t");
  if (last != std::string_view::npos) line.remove_prefix(last + 1);
  pid_t inner = 0;
  const auto [stop, ec] = std::from_chars(line.data(), line.data() + line.size(), inner);
  if (ec != std::errc{} || stop != line.data() + line.size()) return std::nullopt;
  return inner;
}

std::vector<process_info> read_process_table() {
  std::vector<process_info> table;
  // Elsewhere no /proc in this format: the table is empty, as in a container without /proc,
  // and the job is found by its process group (guardian.cpp).
  if (!detail::linux_facilities) return table;
  DIR* proc = ::opendir("/proc");
  if (!proc) return table;
  while (const dirent* entry = ::readdir(proc)) {
    pid_t pid = 0;
    const std::string_view name = entry->d_name;
    const auto [end, ec] = std::from_chars(name.data(), name.data() + name.size(), pid);
    if (ec != std::errc{} || end != name.data() + name.size()) continue;
    if (auto info = read_process(pid)) table.push_back(*info);
  }
  ::closedir(proc);
  return table;
}

std::vector<process_info> descendants_of(const std::vector<process_info>& table, pid_t root) {
  std::unordered_multimap<pid_t, const process_info*> children;
  for (const auto& info : table) children.emplace(info.parent, &info);
  std::vector<process_info> out;
  std::vector<pid_t> pending{root};
  while (!pending.empty()) {
    const pid_t parent = pending.back();
    pending.pop_back();
    const auto [first, last] = children.equal_range(parent);
    for (auto it = first; it != last; ++it) {
      // A process listed as its own ancestor (a PID reused while /proc was read) ends the walk.
      if (it->second->pid == root) continue;
      out.push_back(*it->second);
      pending.push_back(it->second->pid);
    }
    if (out.size() > table.size()) break;
  }
  return out;
}

bool signal_process(const process_info& listed, int signal) {
  const int pidfd = open_pidfd(listed.pid);
  if (pidfd < 0) {
    // Without pidfds (Linux before 5.3) the check and the signal cannot be made one; the start
    // time still guards against a PID reused before the check.
    if (errno != ENOSYS) return false;
    const auto now = read_process(listed.pid);
    return now && now->start_time == listed.start_time && ::kill(listed.pid, signal) == 0;
  }
  // The pidfd names the process that has the PID now; if it started when the listed one did,
  // it is the listed one, and the signal can reach no other.
  const auto now = read_process(listed.pid);
  const bool same = now && now->start_time == listed.start_time;
  const bool sent = same && send_through_pidfd(pidfd, signal) == 0;
  ::close(pidfd);
  return sent;
}

unsigned signal_descendants(pid_t root, int signal, pid_t spare) {
  unsigned running = 0;
  for (const auto& process : descendants_of(read_process_table(), root)) {
    if (process.pid == spare) continue;
    if (signal_process(process, signal) && process.state != 'Z') ++running;
  }
  return running;
}

}  // namespace s3lect::guardian
