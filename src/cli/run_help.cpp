// The text of `s3lect run --help`: what run does, its options, peer mode, logs and the exit codes.
#include "base/platform.hpp"
#include "cli/exit_codes.hpp"
#include "cli/run.hpp"
#include "cli/serve_options.hpp"

#include <string>

namespace s3lect::cli {

namespace {

/// What `s3lect run` does, the head of its help.
const char* run_description() {
  return "usage: s3lect run --lock s3://BUCKET/KEY [options] -- COMMAND [ARGS...]\n"
         "Campaigns for the lock and runs COMMAND only while this process is the leader.\n"
         "\n"
         "COMMAND runs in its own process group, with these variables added to its\n"
         "environment:\n"
         "  S3LECT_TERM       the fencing token: greater than every earlier leader's. Pass it\n"
         "                    to the resources you protect, so that they can refuse a stale\n"
         "                    leader.\n"
         "  S3LECT_LEADER_ID  this node's --id\n"
         "  S3LECT_LOCK       s3://BUCKET/KEY (with --slots: s3://BUCKET/KEY.slot-N)\n"
         "  S3LECT_SLOT       with --slots: the slot N this node leads, 0 to --slots - 1\n"
         "COMMAND runs under a guardian (s3lect-guardian, a small process of its own) that\n"
         "owns its whole process tree: children, grandchildren and daemons that called\n"
         "setsid or forked twice all stay in it. No process of the tree outlives the\n"
         "leadership:\n"
         "- When leadership is lost (no renewal succeeded within the renew deadline, or\n"
         "  another node holds the lock), every process of the tree gets SIGTERM, and\n"
         "  SIGKILL after --kill-grace; s3lect then campaigns again and starts COMMAND anew\n"
         "  when it leads again.\n"
         "- When COMMAND exits by itself, whatever is left of its tree is killed, s3lect\n"
         "  releases the lock, so that a follower takes over at its next read (within\n"
         "  --frequent / 2 in S3 mode, milliseconds with --peer-watch: \"handover and\n"
         "  failover\" below), and exits with COMMAND's status.\n";
}

/// How the guardian keeps COMMAND's tree within the leadership, and what the store's failures do.
const char* run_guardian_and_store() {
  return "- On SIGINT or SIGTERM, s3lect stops the tree the same way (a second signal kills\n"
         "  it at once), releases the lock and exits 0. SIGHUP, SIGUSR1 and SIGUSR2 are\n"
         "  passed on to COMMAND's process group.\n"
         "- If s3lect dies (kill -9, the OOM killer, a crash), the guardian kills the whole\n"
         "  tree at once, then releases the lock on its behalf if the record is still the\n"
         "  one s3lect last wrote: a follower takes over at its next read, as above.\n"
         "- If s3lect stops (SIGSTOP, a debugger, a stuck event loop), the guardian stops the\n"
         "  tree by itself at the renew deadline of the last renewal s3lect told it of\n"
         "  (SIGTERM, SIGKILL after --kill-grace), before any other node may take over. The\n"
         "  guardian runs in a session of its own: a stop of s3lect's process group or\n"
         "  session (Ctrl-Z, kill -STOP -PGID, a supervisor) stops s3lect alone.\n"
         "- s3lect never waits on the guardian without a bound: a guardian that has not\n"
         "  reported the tree's end --kill-grace + 1 s after a stop (its job stopped it, say)\n"
         "  is killed with the whole tree by s3lect itself, before any release.\n"
         "Only a whole frozen machine (s3lect and its guardian stopped alike), root, or a\n"
         "job that stops its own guardian while s3lect is stopped too can keep COMMAND past\n"
         "its leadership: that is what the fencing token is for. Where the system allows it\n"
         "(--isolation), the tree also gets a PID namespace of its own, which dies with the\n"
         "guardian whatever kills it and in which the job cannot name its guardian, and a\n"
         "cgroup of its own, which no process can leave. The guardian and its helpers are\n"
         "not dumpable, hold no descriptor the job could take, and get s3lect's\n"
         "environment in sealed files rather than their own. COMMAND gets s3lect's\n"
         "environment, credentials included: to withhold them, run\n"
         "`-- env -u AWS_SECRET_ACCESS_KEY -u AWS_SESSION_TOKEN COMMAND`.\n"
         "Before campaigning, s3lect reads the lock once: an unreachable store, refused\n"
         "credentials or a missing bucket end it at once (exit 4). With --wait-for-store,\n"
         "failures that retrying can fix (timeouts, refused connections, DNS, TLS\n"
         "handshakes, 5xx, throttling) are logged and retried every --frequent interval\n"
         "instead, until the store answers or a stop signal comes (exit 0). Later store\n"
         "failures are retried and logged, and a leader that cannot renew steps down.\n"
#if !S3LECT_LINUX_FACILITIES
         "On this system (not Linux) the guardian is no subreaper and the tree gets no PID\n"
         "namespace or cgroup: a process that left COMMAND's process group (setsid) is\n"
         "neither found nor killed, nothing ends the tree if the guardian itself is killed,\n"
         "and when s3lect dies its lock is not released: followers take over when the\n"
         "lease ends. Suspend time may not count toward the deadlines (docs/operations.md).\n"
#endif
      ;
}

/// What a change of leader takes, by lease and mode (docs/performance.md measured it).
const char* handover_and_failover() {
  return "\n"
         "handover and failover: three settled nodes, only --lease given, a local store;\n"
         "seconds, median/max (docs/performance.md#handover-and-failover-by-lease):\n"
         "  lease  SIGTERM    kill -9 of   s3lect and     S3 GETs per    peer-watch\n"
         "                    s3lect       guardian lost  follower-month SIGTERM\n"
         "  2s     0.25/0.29  0.12/0.32    1.81/2.05      $3.15          0.04/0.05\n"
         "  6s     0.50/0.96  0.70/1.04    5.07/5.96      $1.05          0.04/0.07\n"
         "  15s    1.32/2.17  1.34/2.34    12.4/14.4      $0.42          0.05/0.06\n"
         "  60s    7.05/7.46  8.88/9.85    56.1/58.9      $0.105         0.04/4.97\n"
         "In S3 mode a follower reads every --frequent / 2 and takes a release (SIGTERM,\n"
         "or the guardian's after kill -9) at its next read; a lock nobody releases by\n"
         "rule (b), about a lease after the crash. --follower-reads economy reads a twelfth\n"
         "as often once settled and may notice either up to --infrequent late (1.8 x lease\n"
         "measured).\n"
         "--peer-watch: no S3 read per follower, a release in milliseconds.\n";
}

/// Peer mode, the log format and the exit codes, the tail of its help.
const char* run_help_epilogue() {
  return "\n"
         "peer mode, e.g. on 10.0.0.5 (the same options on every node, each with its own\n"
         "certificate naming its address):\n"
         "  s3lect run --lock s3://b/k --peer --addr 10.0.0.5:8443 --peer-cert node.pem \\\n"
         "    --peer-key node-key.pem --peer-ca ca.pem --peer-watch -- COMMAND\n"
         "On SIGINT or SIGTERM the lock is released first, then the health endpoint answers\n"
         "the followers' open watches and closes.\n"
         "What peer mode trusts: the store's answers (over https with a verified\n"
         "certificate, or plain http to a loopback IP literal such as 127.0.0.1, which a\n"
         "local user who binds that port while the store is down could answer; a host name\n"
         "over http needs --trust-plain-http-store); the leader's endpoint only as the record\n"
         "names it (its key pin, or --peer-ca and its host); a follower's claim only when its\n"
         "registration object in the bucket (written by the node itself, rewritten within\n"
         "--infrequent if someone replaces it) or a --peer-ca client certificate naming its\n"
         "--id confirms it. Nothing a client sends makes anyone leader.\n"
         "\n"
         "logs: one line per event on stderr, e.g.\n"
         "  time=2026-11-21T10:30:45.123Z level=info msg=\"became leader\" term=3 after_ms=1520\n"
         "  lock=s3://b/k id=host:123\n"
         "\n"
         "When COMMAND exits by itself, run exits with its status; run's own exit 4 means the\n"
         "store cannot be read at start-up (with --wait-for-store: it refuses us).\n";
}

}  // namespace

std::string run_help() {
  return std::string(run_description()) + run_guardian_and_store() + "\noptions:\n" +
         store_location_help() + elector_options_help() + serve_options_help() +
         "  --kill-grace DUR         time COMMAND has between SIGTERM and SIGKILL (default 3s,\n"
         "                           or 3/5 of lease - renew deadline when either is given; 0:\n"
         "                           SIGKILL at once). Must be less than lease - renew deadline\n"
         "                           (5s by default), so that COMMAND is gone before another\n"
         "                           node may take over.\n"
         "  --wait-for-store         at start-up, wait for a store that cannot be reached yet\n"
         "                           (see above; default: off, exit 4)\n" +
         run_extra_options_help() +
         "  --help                   print this help\n"
         "  Durations: 500ms, 15s, 1m, 1m30s, 2h.\n" +
         handover_and_failover() + run_help_epilogue() + "\n" + exit_code_table();
}

}  // namespace s3lect::cli
