// What keeps a job's processes together beyond its guardian (guardian/job_launch.hpp), as this
// system allows it: found at start-up by the guardian's own probe, so that what is logged is
// what the jobs will get.
#pragma once

#include "guardian/job_launch.hpp"

#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace s3lect::cli {

/// The probe's findings.
struct isolation_probe {
  guardian::isolation available;
  std::string pid_namespace_problem;  ///< Why there is no PID namespace, when there is none.
  std::string cgroup_problem;         ///< Why there is no cgroup, when there is none.
  /// Job cgroups of guardians that died, killed and removed: how many processes each still
  /// held, and where it was.
  std::vector<std::pair<unsigned, std::string>> stale;
};

/// Parses the output of `s3lect-guardian --probe`.
isolation_probe parse_isolation_probe(const std::string& output);

/// Runs `guardian_path --probe`. nullopt with `error` set when the guardian cannot be run.
std::optional<isolation_probe> probe_isolation(const std::string& guardian_path,
                                               std::string& error);

/// The isolation jobs get: `required` (--isolation) if the system allows it, else what it
/// allows (auto: nullopt). nullopt with `error` naming what is missing and why.
std::optional<guardian::isolation> choose_isolation(
    const isolation_probe& probe, const std::optional<guardian::isolation>& required,
    std::string& error);

}  // namespace s3lect::cli
