// s3lect's side of the job guardian (guardian/guardian.hpp): starts s3lect-guardian, which
// starts the command and owns its whole process tree, and talks to it over a socket pair whose
// closing tells the guardian that s3lect is gone.
#pragma once

#include "supervision/child_process.hpp"

#include "guardian/control_socket.hpp"
#include "guardian/job_launch.hpp"
#include "guardian/protocol.hpp"

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/awaitable.hpp>
#include <boost/asio/posix/stream_descriptor.hpp>
#include <boost/system/error_code.hpp>

#include <chrono>
#include <deque>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace s3lect::cli {

/// What to start the guardian with.
struct guardian_request {
  std::string guardian_path;  ///< The s3lect-guardian executable (find_guardian()).
  /// The command, as child_process would start it: the guardian gets its environment, stdin,
  /// inherited descriptors and SIGPIPE disposition, and hands them on.
  spawn_request command;
  guardian::lead_until confirmed;  ///< The first deadline: the command starts only before it.
  std::chrono::milliseconds kill_grace{0};
  guardian::isolation level;
  /// Release the lock with these arguments (`--slot N`, then `--` and the arguments of
  /// `s3lect run`) should s3lect die; empty: never.
  std::vector<std::string> release_args;
  bool log_json = false;
  bool log_info = false;
  std::vector<std::pair<std::string, std::string>> log_fields;
};

/// The descriptors s3lect-guardian gets (-1: none).
struct guardian_descriptors {
  int control = -1;
  int job_environment = -1;  ///< The command's environment (a sealed file, Linux).
  int release_exe = -1;      ///< The s3lect binary, for the release should s3lect die.
  int release_args = -1;
  int release_environment = -1;
};

/// The arguments of s3lect-guardian for `request`, after argv[0].
std::vector<std::string> guardian_arguments(const guardian_request& request,
                                            const guardian_descriptors& fds);

/// The variables of s3lect's environment the guardian's own environment keeps where it gets
/// the command's in a file: those the loader and the sanitizer runtimes read as the process
/// starts, nothing secret. The command and the release get their whole environment from files.
std::vector<std::string> guardian_runtime_variables();

/// The s3lect-guardian executable: $S3LECT_GUARDIAN when set, else in this executable's
/// directory (a build tree), else where the package installs it relative to this executable,
/// else at the absolute path the build installs it to (S3LECT_GUARDIAN_PATH). Empty when none is
/// there.
std::string find_guardian();

/// A running guardian.
class guardian_process {
 public:
  /// Starts the guardian; it starts the command at once. nullptr with `error` set when the
  /// guardian itself could not be started (the command's own start is reported as a message).
  static std::unique_ptr<guardian_process> spawn(boost::asio::any_io_executor executor,
                                                 const guardian_request& request,
                                                 boost::system::error_code& error);

  /// A guardian still running is told to kill the job and go (nothing is released).
  ~guardian_process();
  guardian_process(const guardian_process&) = delete;
  guardian_process& operator=(const guardian_process&) = delete;

  /// The guardian's own pid.
  pid_t pid() const noexcept { return process_->pid(); }

  /// Sends `message` at once, never waiting: false when it could not be sent whole (the guardian
  /// is gone, or so stuck that its socket is full: its deadline then ends the job anyway).
  bool send(const guardian::to_guardian& message);

  /// The next message. nullopt: the guardian is gone (its socket closed). Cancellation: any
  /// type; no message is lost. Not for a race with other operations (`a || b`): a message it
  /// returned is lost when another operation wins in the same turn; use async_wait_message.
  boost::asio::awaitable<std::optional<guardian::from_guardian>> async_receive();

  /// Waits until message_ready(), consuming nothing, so that it may race other operations:
  /// whichever wins, the message stays for take(). Cancellation: any type.
  boost::asio::awaitable<void> async_wait_message();
  /// A message can be taken, or the guardian is gone (take() then gives nullopt).
  bool message_ready();
  /// The next message; nullopt when the guardian is gone. Call only when message_ready().
  std::optional<guardian::from_guardian> take();

  /// Waits for the guardian process to exit and returns its shell status. Cancellation: any
  /// type.
  boost::asio::awaitable<int> async_wait_exit() { return process_->async_wait_exit(); }

  /// Resumes the guardian if it is stopped (a process of the job, or anyone else, sent it
  /// SIGSTOP): stopped, it could neither end the job at its deadline nor answer. Returns
  /// whether it was seen stopped (where /proc shows it; elsewhere SIGCONT goes anyway).
  bool resume_if_stopped();

  /// One pass of ending the job's tree without the guardian's help, for a guardian that does
  /// not answer: SIGKILL to every descendant of the guardian that /proc shows (while the
  /// guardian lives, a subreaper, every process of the job, its PID namespace's too, is one)
  /// and, where there is no /proc, to the command's process group (`command`). Returns how
  /// many of them still ran; 0 again and again means the tree is gone (dead, if not reaped).
  unsigned kill_tree_pass(pid_t command);

  /// SIGKILL to the guardian itself: only after its tree, whose processes would otherwise be
  /// re-parented away from it and out of reach.
  void kill() noexcept;

  /// Whether /proc shows this machine's processes, so that kill_tree_pass() finds the tree.
  static bool process_table_available();

 private:
  guardian_process(std::unique_ptr<child_process> process,
                   boost::asio::posix::stream_descriptor control);

  std::unique_ptr<child_process> process_;
  boost::asio::posix::stream_descriptor control_;
  guardian::control_writer writer_;
  guardian::control_reader reader_;  // kept across receives: no message lost to a cancellation
  std::deque<guardian::from_guardian> ready_;  // decoded, not yet taken
  bool closed_ = false;                        // end of file: the guardian is gone
};

}  // namespace s3lect::cli
