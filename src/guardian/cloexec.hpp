// Pipes and socket pairs whose descriptors are close-on-exec from the start where the system
// allows it (pipe2 and SOCK_CLOEXEC, Linux), else right after they are made (macOS): a process
// forked by another thread in between would inherit them, which `s3lect run` makes harmless by
// marking every descriptor close-on-exec before it starts a process (child_process.cpp).
#pragma once

namespace s3lect::guardian {

/// pipe(2) with both ends close-on-exec. false with errno set.
bool open_cloexec_pipe(int (&fds)[2]);

/// socketpair(AF_UNIX, type) with both ends close-on-exec. false with errno set.
bool open_cloexec_socketpair(int type, int (&fds)[2]);

}  // namespace s3lect::guardian
