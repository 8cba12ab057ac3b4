#include "guardian/job_cgroup.hpp"

#include "base/platform.hpp"
#include "guardian/process_table.hpp"

#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <charconv>
#include <filesystem>
#include <sstream>
#include <string_view>
#include <thread>
#include <utility>
#include <vector>

namespace s3lect::guardian {
namespace {

std::string read_text(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return {};
  std::string text;
  char buffer[4096];
  ssize_t got;
  while ((got = ::read(fd, buffer, sizeof buffer)) > 0)
    text.append(buffer, static_cast<size_t>(got));
  ::close(fd);
  return text;
}

bool write_text(const std::string& path, std::string_view text) {
  const int fd = ::open(path.c_str(), O_WRONLY | O_CLOEXEC);
  if (fd < 0) return false;
  const ssize_t put = ::write(fd, text.data(), text.size());
  const int saved = errno;
  ::close(fd);
  errno = saved;
  return put == static_cast<ssize_t>(text.size());
}

/// mountinfo escapes spaces, tabs, newlines and backslashes as \ooo.
std::string unescape_mount_path(std::string_view text) {
  std::string out;
  for (std::size_t i = 0; i < text.size(); ++i) {
    if (text[i] == '\\' && i + 3 < text.size()) {
      int value = 0;
      const auto [end, ec] = std::from_chars(text.data() + i + 1, text.data() + i + 4, value, 8);
      if (ec == std::errc{} && end == text.data() + i + 4) {
        out.push_back(static_cast<char>(value));
        i += 3;
        continue;
      }
    }
    out.push_back(text[i]);
  }
  return out;
}

/// The mount point and root of the first cgroup2 mount in `mountinfo`.
std::optional<std::pair<std::string, std::string>> cgroup2_mount(const std::string& mountinfo) {
  std::istringstream lines(mountinfo);
  for (std::string line; std::getline(lines, line);) {
    const auto separator = line.find(" - ");
    if (separator == std::string::npos) continue;
    std::istringstream tail(line.substr(separator + 3));
    std::string type;
    tail >> type;
    if (type != "cgroup2") continue;
    std::istringstream head(line.substr(0, separator));
    std::string id, parent, device, root, mount_point;
    if (head >> id >> parent >> device >> root >> mount_point) {
      return std::make_pair(unescape_mount_path(mount_point), unescape_mount_path(root));
    }
  }
  return std::nullopt;
}

/// SIGKILLs every process in the cgroup at `directory`: atomically with cgroup.kill (Linux
/// 5.14), else one by one from cgroup.procs; a process forked meanwhile is caught by the next
/// call (callers call again until the tree is gone). False when neither could be done.
bool kill_cgroup_processes(const std::string& directory) {
  if (write_text(directory + "/cgroup.kill", "1")) return true;
  const std::string procs_path = directory + "/cgroup.procs";
  if (::access(procs_path.c_str(), R_OK) != 0) return false;
  std::istringstream pids(read_text(procs_path));
  for (pid_t pid; pids >> pid;) {
    if (const auto info = read_process(pid)) signal_process(*info, SIGKILL);
  }
  return true;
}

}  // namespace

std::string cgroup_directory(const std::string& mountinfo, const std::string& proc_cgroup) {
  const auto mount = cgroup2_mount(mountinfo);
  if (!mount) return {};
  std::istringstream lines(proc_cgroup);
  for (std::string line; std::getline(lines, line);) {
    if (line.rfind("0::", 0) != 0) continue;
    std::string path = line.substr(3);
    const auto& [mount_point, root] = *mount;
    if (root != "/") {
      if (path.rfind(root, 0) != 0) return {};
      path.erase(0, root.size());
    }
    if (path == "/") path.clear();
    return mount_point + path;
  }
  return {};
}

cgroup_location own_cgroup() {
  if (!detail::linux_facilities) return {{}, "not supported on this system (Linux only)"};
  const std::string directory =
      cgroup_directory(read_text("/proc/self/mountinfo"), read_text("/proc/self/cgroup"));
  if (directory.empty()) return {{}, "no cgroup v2 hierarchy (cgroup2 not mounted)"};
  return {directory, {}};
}

std::optional<job_cgroup> job_cgroup::create(const std::string& parent) {
  const std::string directory = parent + "/s3lect-job-" + std::to_string(::getpid());
  // A directory of this name was left by a guardian that had this PID before and was killed:
  // it holds no process of ours, and rmdir succeeds only if it is empty.
  if (::mkdir(directory.c_str(), 0755) != 0) {
    if (errno != EEXIST || ::rmdir(directory.c_str()) != 0 ||
        ::mkdir(directory.c_str(), 0755) != 0) {
      return std::nullopt;
    }
  }
  return job_cgroup(directory);
}

job_cgroup::job_cgroup(std::string directory) : directory_(std::move(directory)) {}

job_cgroup::job_cgroup(job_cgroup&& other) noexcept
    : directory_(std::move(other.directory_)), removed_(other.removed_) {
  other.removed_ = true;
}

job_cgroup& job_cgroup::operator=(job_cgroup&& other) noexcept {
  if (this != &other) {
    if (!removed_) remove();
    directory_ = std::move(other.directory_);
    removed_ = std::exchange(other.removed_, true);
  }
  return *this;
}

job_cgroup::~job_cgroup() {
  if (!removed_) remove();
}

bool job_cgroup::adopt(pid_t pid) const {
  return write_text(directory_ + "/cgroup.procs", std::to_string(pid));
}

bool job_cgroup::kill_all() const {
  return kill_cgroup_processes(directory_);
}

bool job_cgroup::remove() {
  if (removed_) return true;
  // The last processes leave the cgroup as the kernel finishes their exit, a moment after they
  // were reaped: a few short retries.
  for (int attempt = 0; attempt < 50; ++attempt) {
    if (::rmdir(directory_.c_str()) == 0 || errno == ENOENT) {
      removed_ = true;
      return true;
    }
    if (errno != EBUSY) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  return false;
}

std::vector<stale_job_cgroup> remove_stale_job_cgroups(const std::string& parent) {
  std::vector<stale_job_cgroup> removed;
  std::error_code error;
  for (const auto& entry : std::filesystem::directory_iterator(parent, error)) {
    const std::string name = entry.path().filename().string();
    constexpr std::string_view prefix = "s3lect-job-";
    if (name.rfind(prefix, 0) != 0 || !entry.is_directory()) continue;
    pid_t guardian = 0;
    const auto [end, ec] =
        std::from_chars(name.data() + prefix.size(), name.data() + name.size(), guardian);
    if (ec != std::errc{} || end != name.data() + name.size()) continue;
    // A live process with that PID may be its guardian, or a stranger that reused the PID:
    // either way the cgroup is left alone.
    if (::kill(guardian, 0) == 0 || errno != ESRCH) continue;
    std::istringstream pids(read_text(entry.path().string() + "/cgroup.procs"));
    unsigned processes = 0;
    for (pid_t pid; pids >> pid;) ++processes;
    if (kill_and_remove_cgroup(entry.path().string())) {
      removed.push_back({entry.path().string(), processes});
    }
  }
  return removed;
}

bool kill_and_remove_cgroup(const std::string& directory) {
  for (int attempt = 0; attempt < 100; ++attempt) {
    kill_cgroup_processes(directory);
    if (::rmdir(directory.c_str()) == 0 || errno == ENOENT) return true;
    if (errno != EBUSY) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return false;
}

}  // namespace s3lect::guardian
