// The job guardian's parts that need no process: its messages, /proc and mountinfo parsing, its
// log lines and its command line.
#include "guardian/cloexec.hpp"
#include "guardian/descriptors.hpp"
#include "guardian/guardian_log.hpp"
#include "guardian/guardian_options.hpp"
#include "guardian/job_cgroup.hpp"
#include "guardian/job_launch.hpp"
#include "guardian/process_table.hpp"
#include "guardian/protocol.hpp"

#include <gtest/gtest.h>

#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>

namespace {

namespace guardian = s3lect::guardian;

TEST(GuardianProtocol, EveryMessageSurvivesItsPacket) {
  const std::vector<guardian::to_guardian> down{
      guardian::lead_until{1234567890123, 42, "9f1c2a7e5b3d4c11"}, guardian::forward_signal{10},
      guardian::stop_job{3000}, guardian::kill_job{}, guardian::farewell{}};
  for (const auto& message : down) {
    EXPECT_EQ(guardian::decode_to_guardian(guardian::encode(message)), message)
        << guardian::encode(message);
  }
  const std::vector<guardian::from_guardian> up{
      guardian::job_started{4242, "pid-namespace+cgroup", "/sys/fs/cgroup/a b/s3lect-job-7"},
      guardian::job_started{17, "guardian", ""}, guardian::job_failed{2, "exec"},
      guardian::job_ended{137, guardian::end_cause::deadline, 3}};
  for (const auto& message : up) {
    EXPECT_EQ(guardian::decode_from_guardian(guardian::encode(message)), message)
        << guardian::encode(message);
  }
}

TEST(GuardianProtocol, RefusesWhatIsNotAMessage) {
  for (const char* packet : {"", "until", "until 1 2", "until x 2 n", "until 1 2 n n", "signal 0",
                             "signal 99", "stop -1", "kill now", "hello"}) {
    EXPECT_FALSE(guardian::decode_to_guardian(packet)) << packet;
  }
  for (const char* packet : {"started", "started 0 guardian", "started -5 guardian",
                             "failed x exec", "ended 1 vanished 0", "ended 1 exited"}) {
    EXPECT_FALSE(guardian::decode_from_guardian(packet)) << packet;
  }
}

TEST(ProcessTable, ReadsStatLinesWhoseCommandNameHasSpacesAndParentheses) {
  const std::string line =
      "4242 (a (b) c) S 17 4242 4242 0 -1 4194560 100 0 0 0 1 2 0 0 20 0 1 0 987654 0 0";
  const auto info = guardian::parse_process_stat(line);
  ASSERT_TRUE(info);
  EXPECT_EQ(info->pid, 4242);
  EXPECT_EQ(info->parent, 17);
  EXPECT_EQ(info->state, 'S');
  EXPECT_EQ(info->start_time, 987654u);
  EXPECT_FALSE(guardian::parse_process_stat("4242 (truncated"));
}

TEST(ProcessTable, FindsDescendantsThroughEveryGeneration) {
  const std::vector<guardian::process_info> table{
      {10, 1, 0, 'S'}, {11, 10, 0, 'S'}, {12, 11, 0, 'S'}, {13, 12, 0, 'Z'}, {20, 1, 0, 'S'}};
  const auto found = guardian::descendants_of(table, 10);
  std::vector<pid_t> pids;
  for (const auto& process : found) pids.push_back(process.pid);
  std::sort(pids.begin(), pids.end());
  EXPECT_EQ(pids, (std::vector<pid_t>{11, 12, 13}));
  const auto self = guardian::read_process(::getpid());
  ASSERT_TRUE(self);
  EXPECT_EQ(self->parent, ::getppid());
  EXPECT_EQ(guardian::innermost_pid(::getpid()), std::optional<pid_t>(::getpid()));
}

TEST(JobCgroup, FindsItsDirectoryInPureAndHybridHierarchies) {
  const std::string unified =
      "30 23 0:26 / /sys/fs/cgroup rw,nosuid shared:4 - cgroup2 cgroup2 rw,nsdelegate\n";
  EXPECT_EQ(guardian::cgroup_directory(unified, "0::/system.slice/s3lect@job.service\n"),
            "/sys/fs/cgroup/system.slice/s3lect@job.service");
  const std::string hybrid =
      "25 24 0:22 / /sys/fs/cgroup ro - tmpfs tmpfs ro\n"
      "26 25 0:23 / /sys/fs/cgroup/unified rw - cgroup2 cgroup2 rw\n"
      "27 25 0:24 / /sys/fs/cgroup/cpu rw - cgroup cgroup rw,cpu\n";
  EXPECT_EQ(guardian::cgroup_directory(hybrid, "4:cpu:/x\n0::/\n"), "/sys/fs/cgroup/unified");
  // A container's mount of its own subtree, and a mount point with an escaped space.
  EXPECT_EQ(guardian::cgroup_directory(
                "40 30 0:26 /pod/c1 /sys/fs/cgroup rw - cgroup2 cgroup2 rw\n", "0::/pod/c1/app\n"),
            "/sys/fs/cgroup/app");
  EXPECT_EQ(guardian::cgroup_directory("40 30 0:26 / /mnt/cg\\040two rw - cgroup2 cgroup2 rw\n",
                                       "0::/a\n"),
            "/mnt/cg two/a");
  EXPECT_EQ(guardian::cgroup_directory(hybrid.substr(0, hybrid.find('\n') + 1), "0::/\n"), "")
      << "cgroup v1 only";
}

TEST(GuardianLog, WritesLinesAsS3lectDoes) {
  const guardian::guardian_log text(false, true, {{"lock", "s3://b/k"}, {"id", "node a"}});
  EXPECT_EQ(text.format("warning", "s3lect is gone: killing its job", {{"term", 7}}, 1795318742614),
            "time=2026-11-22T03:39:02.614Z level=warning msg=\"s3lect is gone: killing its job\" "
            "term=7 lock=s3://b/k id=\"node a\"");
  // s3lect's context fields are strings, whatever they look like; the guardian's numbers are
  // numbers.
  const guardian::guardian_log json(true, true, {{"id", "-1"}, {"lock", "a\n b\x01"}});
  EXPECT_EQ(json.format("error", "say \"no\"", {{"late_ms", 12}, {"pid", "007"}}, 0),
            "{\"time\":\"1970-01-01T00:00:00.000Z\",\"level\":\"error\",\"msg\":\"say "
            "\\\"no\\\"\",\"late_ms\":12,\"pid\":\"007\",\"id\":\"-1\",\"lock\":\"a\\n "
            "b\\u0001\"}");
  const guardian::guardian_log hostile(false, true, {{"id", "true"}, {"lock", "a\n b=c"}});
  EXPECT_EQ(hostile.format("info", "m", {}, 0),
            "time=1970-01-01T00:00:00.000Z level=info msg=\"m\" id=\"true\" lock=\"a\\n b=c\"");
}

TEST(GuardianOptions, ReadsWhatS3lectGivesAndRefusesTheRest) {
  std::string error;
  const auto options = guardian::parse_guardian_options({"--control-fd",
                                                         "5",
                                                         "--until-ns",
                                                         "99",
                                                         "--term",
                                                         "3",
                                                         "--nonce",
                                                         "abc",
                                                         "--kill-grace-ms",
                                                         "800",
                                                         "--isolation",
                                                         "pid-namespace,cgroup",
                                                         "--log-format",
                                                         "json",
                                                         "--log-field",
                                                         "id=a=b",
                                                         "--release-exe-fd",
                                                         "6",
                                                         "--release-args-fd",
                                                         "7",
                                                         "--",
                                                         "/bin/sh",
                                                         "sh",
                                                         "-c",
                                                         "true"},
                                                        error);
  ASSERT_TRUE(options) << error;
  EXPECT_EQ(options->control_fd, 5);
  EXPECT_EQ(options->confirmed, (guardian::lead_until{99, 3, "abc"}));
  EXPECT_EQ(options->kill_grace.count(), 800);
  EXPECT_EQ(options->level, (guardian::isolation{true, true}));
  EXPECT_TRUE(options->log_json);
  EXPECT_EQ(options->log_fields.at(0), (std::pair<std::string, std::string>{"id", "a=b"}));
  EXPECT_EQ(options->release_args_fd, 7);
  EXPECT_EQ(options->path, "/bin/sh");
  EXPECT_EQ(options->argv, (std::vector<std::string>{"sh", "-c", "true"}));
  for (const std::vector<std::string>& bad :
       {std::vector<std::string>{"--control-fd", "5", "--until-ns", "9", "--nonce", "n", "--"},
        std::vector<std::string>{"--isolation", "vm", "--", "/bin/true", "true"},
        std::vector<std::string>{"--until-ns", "9", "--nonce", "n", "--", "/bin/true", "true"},
        std::vector<std::string>{"--kill-grace-ms", "-1", "--", "/bin/true", "true"}}) {
    EXPECT_FALSE(guardian::parse_guardian_options(bad, error)) << bad[0];
  }
}

TEST(GuardianOptions, ReadsTheReleaseArgumentsFromTheirFile) {
  FILE* file = std::tmpfile();
  ASSERT_NE(file, nullptr);
  static constexpr char bytes[] =
      "--slot\0"
      "3\0"
      "--\0"
      "--lock\0"
      "s3://b/k\0"
      "a b";
  const std::string content(bytes, sizeof bytes);  // The last NUL included.
  ASSERT_EQ(std::fwrite(content.data(), 1, content.size(), file), content.size());
  std::fflush(file);
  const auto args = guardian::read_argument_file(::dup(::fileno(file)));
  std::fclose(file);
  ASSERT_TRUE(args);
  EXPECT_EQ(*args, (std::vector<std::string>{"--slot", "3", "--", "--lock", "s3://b/k", "a b"}));
}

TEST(DescriptorClosing, AForkedHelperKeepsTheUsersDescriptorsAndItsOwnAndClosesTheRest) {
  int guardians[2];
  int helpers[2];
  ASSERT_TRUE(guardian::open_cloexec_pipe(guardians));
  ASSERT_TRUE(guardian::open_cloexec_pipe(helpers));
  const int users = ::dup(guardians[0]);  // no close-on-exec: inherited, to be handed on
  const auto plan = guardian::plan_descriptor_closing({helpers[1]});
  // Opened after the plan was made: closed all the same (close_range).
  const int later = ::fcntl(guardians[0], F_DUPFD_CLOEXEC, 900);
  const pid_t helper = ::fork();
  if (helper == 0) {
    guardian::close_inherited_descriptors(plan);
    const auto open = [](int fd) { return ::fcntl(fd, F_GETFD) >= 0; };
    const bool as_planned = !open(guardians[0]) && !open(guardians[1]) && !open(helpers[0]) &&
                            open(helpers[1]) && open(users) && !open(later) && open(2);
    ::_exit(as_planned ? 0 : 1);
  }
  int status = 0;
  ASSERT_EQ(::waitpid(helper, &status, 0), helper);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  for (const int fd : {guardians[0], guardians[1], helpers[0], helpers[1], users, later})
    ::close(fd);
}

}  // namespace
