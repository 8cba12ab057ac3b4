#include "supervision/job_isolation.hpp"

#include "guardian/cloexec.hpp"

#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <sstream>

extern char** environ;

namespace s3lect::cli {

isolation_probe parse_isolation_probe(const std::string& output) {
  isolation_probe probe;
  probe.pid_namespace_problem = "not reported by the guardian's probe";
  probe.cgroup_problem = probe.pid_namespace_problem;
  std::istringstream lines(output);
  for (std::string line; std::getline(lines, line);) {
    const auto space = line.find(' ');
    const std::string name = line.substr(0, space);
    const std::string verdict = space == std::string::npos ? "" : line.substr(space + 1);
    const bool ok = verdict == "ok";
    const std::string problem =
        verdict.rfind("unavailable ", 0) == 0 ? verdict.substr(12) : verdict;
    if (name == "stale") {
      std::istringstream fields(verdict);
      unsigned processes = 0;
      std::string directory;
      if (fields >> processes && std::getline(fields >> std::ws, directory)) {
        probe.stale.emplace_back(processes, directory);
      }
    } else if (name == "pid-namespace") {
      probe.available.pid_namespace = ok;
      probe.pid_namespace_problem = ok ? "" : problem;
    } else if (name == "cgroup") {
      probe.available.cgroup = ok;
      probe.cgroup_problem = ok ? "" : problem;
    }
  }
  return probe;
}

std::optional<isolation_probe> probe_isolation(const std::string& guardian_path,
                                               std::string& error) {
  int out[2];
  if (!guardian::open_cloexec_pipe(out)) {
    error = std::strerror(errno);
    return std::nullopt;
  }
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, out[1], STDOUT_FILENO);
  char* const argv[] = {const_cast<char*>("s3lect-guardian"), const_cast<char*>("--probe"),
                        nullptr};
  pid_t pid = 0;
  const int spawned = ::posix_spawn(&pid, guardian_path.c_str(), &actions, nullptr, argv, environ);
  posix_spawn_file_actions_destroy(&actions);
  ::close(out[1]);
  std::string output;
  char buffer[512];
  while (spawned == 0) {
    const ssize_t got = ::read(out[0], buffer, sizeof buffer);
    if (got < 0 && errno == EINTR) continue;
    if (got <= 0) break;
    output.append(buffer, static_cast<std::size_t>(got));
  }
  ::close(out[0]);
  if (spawned != 0) {
    error = guardian_path + ": " + std::strerror(spawned);
    return std::nullopt;
  }
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    error = guardian_path + " --probe failed";
    return std::nullopt;
  }
  return parse_isolation_probe(output);
}

std::optional<guardian::isolation> choose_isolation(
    const isolation_probe& probe, const std::optional<guardian::isolation>& required,
    std::string& error) {
  if (!required) return probe.available;
  if (required->pid_namespace && !probe.available.pid_namespace) {
    error =
        "a PID namespace is required but unavailable here (" + probe.pid_namespace_problem + ")";
    return std::nullopt;
  }
  if (required->cgroup && !probe.available.cgroup) {
    error = "a cgroup is required but unavailable here (" + probe.cgroup_problem + ")";
    return std::nullopt;
  }
  return required;
}

}  // namespace s3lect::cli
