// Jobs whose processes form a tree (a background child, a setsid daemon, the main process), and
// finding them again by a marker in their command lines: a job in a PID namespace of its own
// knows its processes by PIDs that mean nothing outside, so tests look for them in /proc.
#pragma once

#include <signal.h>
#include <sys/types.h>

#include <algorithm>
#include <atomic>
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>
#include <string>
#include <vector>

namespace s3lect::test {

/// Digits no other test uses, to mark the processes of one job.
inline std::string job_marker() {
  static std::atomic<unsigned> counter{0};
  std::random_device device;
  return std::to_string(device() % 1000000) + std::to_string(counter++ % 10) + "0";
}

/// The PIDs of the running `sleep` processes (zombies aside) with `marker` in their argument.
/// (Only the sleeps: the shell, the guardian and s3lect have the marker in their command lines
/// too.)
inline std::vector<pid_t> pids_with(const std::string& marker) {
  std::vector<pid_t> pids;
  for (const auto& entry : std::filesystem::directory_iterator("/proc")) {
    const std::string name = entry.path().filename().string();
    if (name.empty() || name.find_first_not_of("0123456789") != std::string::npos) continue;
    std::ifstream cmdline_file(entry.path() / "cmdline");
    std::stringstream cmdline;
    cmdline << cmdline_file.rdbuf();
    std::string text = cmdline.str();
    std::replace(text.begin(), text.end(), '\0', ' ');
    if (text.rfind("sleep ", 0) != 0 || text.find(marker) == std::string::npos) continue;
    std::ifstream stat_file(entry.path() / "stat");
    std::string stat;
    std::getline(stat_file, stat);
    const auto close = stat.rfind(')');
    if (close == std::string::npos || close + 2 >= stat.size() || stat[close + 2] == 'Z') continue;
    pids.push_back(static_cast<pid_t>(std::stol(name)));
  }
  return pids;
}

/// How many `sleep` processes with `marker` run.
inline int processes_with(const std::string& marker) {
  return static_cast<int>(pids_with(marker).size());
}

/// SIGKILLs the `sleep` processes with `marker` a test left running (clean-up only).
inline void kill_processes_with(const std::string& marker) {
  for (const pid_t pid : pids_with(marker)) ::kill(pid, SIGKILL);
}

/// A shell command whose job is a tree of three processes marked with `marker`: a background
/// child, a daemon that double-forks and calls setsid, and the main process, each a `sleep`.
inline std::string job_tree_command(const std::string& marker) {
  return "sleep 600." + marker + "1 & (setsid sleep 600." + marker + "2 &); exec sleep 600." +
         marker + "3";
}

/// The same tree without the setsid daemon: two processes, both in the command's process group.
inline std::string group_tree_command(const std::string& marker) {
  return "sleep 600." + marker + "1 & exec sleep 600." + marker + "3";
}

}  // namespace s3lect::test
