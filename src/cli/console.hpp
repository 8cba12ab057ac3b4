// What the command-line tool prints for its user: stdout and stderr through stdio.
//
// Not iostreams: with libstdc++ linked statically (the compact preset), including <iostream>
// anywhere makes start-up build every locale facet, narrow and wide, and keeps ~0.4 MB of
// their code resident for the life of `s3lect run` (docs/performance.md, process memory).
#pragma once

#include <string_view>

namespace s3lect::cli {

/// Writes `text` to stdout and flushes it, so that it comes out before any later output of a
/// child process or of stderr.
void print_out(std::string_view text);

/// Writes `text` to stderr (unbuffered).
void print_err(std::string_view text);

}  // namespace s3lect::cli
