// Parsing the chaos event log (chaos_checker_core.hpp, parse_chaos_log): records to commands,
// stops and faults, each command's end found from its own record or the driver's.
#include "chaos_checker_core.hpp"

#include <algorithm>
#include <charconv>
#include <map>
#include <sstream>

namespace s3lect::chaos {

namespace {

std::optional<micros> parse_time(std::string_view text) {
  const auto dot = text.find('.');
  const std::string_view whole = text.substr(0, dot);
  micros seconds = 0;
  auto [end, ec] = std::from_chars(whole.data(), whole.data() + whole.size(), seconds);
  if (ec != std::errc{} || end != whole.data() + whole.size() || whole.empty()) return std::nullopt;
  micros fraction = 0;
  if (dot != std::string_view::npos) {
    std::string digits(text.substr(dot + 1));
    if (digits.empty() || digits.find_first_not_of("0123456789") != std::string::npos) {
      return std::nullopt;
    }
    digits.resize(6, '0');  // truncating beyond microseconds is within one microsecond
    fraction = std::stoll(digits);
  }
  return seconds * 1'000'000 + fraction;
}

template <class T>
bool parse_number(std::string_view text, T& value) {
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  return ec == std::errc{} && end == text.data() + text.size();
}

/// A command's end as the driver or s3lect saw it, for commands that logged none of their own.
struct death {
  std::string node;
  long pid = 0;  // 0: every process of the node
  micros at = 0;
  std::string source;
  log_line line;
};

/// A record that ends a command (its `end`, or its tree's `treeend`): which command, and when.
struct ending {
  std::string node;
  std::uint64_t term = 0;
  long pid = 0;
  micros at = 0;
};

class log_parser {
 public:
  void read(const std::string& text, int number) {
    std::istringstream words(text);
    w_.clear();
    for (std::string word; words >> word;) w_.push_back(word);
    if (w_.empty() || w_[0][0] == '#') return;
    line_ = {number, text};
    const std::string& kind = w_[0];
    if ((kind == "begin" || kind == "finish") && w_.size() == 2) {
      bound(kind == "begin" ? log_.begin : log_.finish,
            kind == "begin" ? have_begin_ : have_finish_);
    } else if (kind == "start" && w_.size() == 5) {
      start();
    } else if (kind == "end" && w_.size() == 5) {
      command_end();
    } else if (kind == "treewatch" && w_.size() == 2) {
      log_.trees_watched = true;
    } else if (kind == "treeend" && w_.size() == 5) {
      tree_end();
    } else if ((kind == "kill" && w_.size() == 3) || (kind == "exit" && w_.size() >= 3)) {
      if (const auto t = time(2, "bad " + kind + " record")) {
        deaths_.push_back({w_[1], 0, *t, kind, line_});
        if (kind == "exit") log_.restarts[w_[1]].push_back(*t);  // restarted at once
      }
    } else if (kind == "reaped" && w_.size() == 4) {
      long pid = 0;
      const auto t = time(3, "bad reaped record");
      if (t && parse_number(w_[2], pid)) {
        deaths_.push_back({w_[1], pid, *t, "reaped", line_});
      } else if (t) {
        bad("bad reaped record");
      }
    } else if ((kind == "stop" || kind == "freeze") && w_.size() == 4) {
      if (const auto event = interval(kind, w_[1], 2)) {
        (kind == "stop" ? log_.stops : log_.freezes).push_back(*event);
        log_.faults.push_back(*event);
      }
    } else if (kind == "thief" && w_.size() == 5) {
      theft attempt{w_[1], 0, 0, 0, line_};
      const auto t = time(3, "bad thief record");
      if (t && parse_number(w_[2], attempt.term) && parse_number(w_[4], attempt.taken)) {
        attempt.at = *t;
        log_.thefts.push_back(std::move(attempt));
      } else if (t) {
        bad("bad thief record");
      }
    } else if (kind == "claimflood" && w_.size() == 6) {
      claim_flood flood{0, w_[2], 0, 0, 0, line_};
      const auto t = time(1, "bad claimflood record");
      if (t && parse_number(w_[3], flood.sent) && parse_number(w_[4], flood.answered) &&
          parse_number(w_[5], flood.named) && !flood.id_prefix.empty()) {
        flood.at = *t;
        log_.floods.push_back(std::move(flood));
      } else if (t) {
        bad("bad claimflood record");
      }
    } else if (kind == "fault" && w_.size() >= 5) {
      if (auto event = interval(w_[1], w_[2], 3)) {
        for (std::size_t i = 5; i < w_.size(); ++i) {
          event->detail += (i > 5 ? " " : "") + w_[i];
        }
        // A killed or terminated node is started again when its fault ends.
        if (event->kind == "kill" || event->kind == "term") {
          log_.restarts[event->target].push_back(event->to);
        }
        log_.faults.push_back(*event);
      }
    } else {
      bad("unknown record");
    }
  }

  chaos_log finish() {
    if (!have_begin_) log_.errors.push_back("no begin record");
    if (!have_finish_) log_.errors.push_back("no finish record");
    check_span();
    for (std::size_t i = 0; i < log_.children.size(); ++i) end_of(log_.children[i], i);
    std::stable_sort(log_.children.begin(), log_.children.end(),
                     [](const child_run& a, const child_run& b) { return a.start < b.start; });
    return std::move(log_);
  }

 private:
  void bad(const std::string& why) {
    log_.errors.push_back("line " + std::to_string(line_.number) + ": " + why + ": " + line_.text);
  }

  /// The time in word `index`, remembered for the span check; nullopt (reported) if malformed.
  std::optional<micros> time(std::size_t index, const std::string& why) {
    const auto t = parse_time(w_[index]);
    if (t) {
      stamps_.emplace_back(*t, line_);
    } else {
      bad(why);
    }
    return t;
  }

  void bound(micros& at, bool& seen) {
    const auto t = parse_time(w_[1]);
    if (!t) {
      bad("bad time");
      return;
    }
    at = *t;
    seen = true;
  }

  /// `KIND NODE TERM ...` with the time at word `time_index` and the pid at `pid_index`.
  std::optional<ending> command_record(std::size_t time_index, std::size_t pid_index) {
    ending e{w_[1], 0, 0, 0};
    const auto t = parse_time(w_[time_index]);
    if (!t || !parse_number(w_[2], e.term) || !parse_number(w_[pid_index], e.pid)) {
      bad("bad " + w_[0] + " record");
      return std::nullopt;
    }
    stamps_.emplace_back(*t, line_);
    e.at = *t;
    return e;
  }

  void start() {
    const auto e = command_record(3, 4);
    if (!e) return;
    child_run run;
    run.node = e->node;
    run.term = e->term;
    run.pid = e->pid;
    run.start = e->at;
    run.start_line = line_;
    log_.children.push_back(run);
    command_ends_.emplace_back();
    tree_ends_.emplace_back();
  }

  /// The latest command started with e's node, term and pid whose `slots` entry is still free.
  std::optional<std::size_t> match(const ending& e,
                                   const std::vector<std::optional<micros>>& slots) {
    for (std::size_t i = log_.children.size(); i-- > 0;) {
      const child_run& run = log_.children[i];
      if (!slots[i] && run.node == e.node && run.pid == e.pid && run.term == e.term) return i;
    }
    return std::nullopt;
  }

  void command_end() {
    const auto e = command_record(3, 4);
    if (!e) return;
    // The command's trap ran before its start record was written: it never worked.
    const auto i = match(*e, command_ends_);
    if (!i) {
      ++log_.aborted_starts;
      return;
    }
    command_ends_[*i] = e->at;
    log_.children[*i].command_end_line = line_;
  }

  void tree_end() {
    const auto e = command_record(4, 3);
    if (!e) return;
    // A command killed after it told the watcher who it was and before its start record.
    const auto i = match(*e, tree_ends_);
    if (!i) {
      ++log_.unmatched_tree_ends;
      return;
    }
    tree_ends_[*i] = e->at;
    tree_lines_[*i] = line_;
  }

  std::optional<interval_event> interval(const std::string& kind, const std::string& target,
                                         std::size_t from_index) {
    const auto from = parse_time(w_[from_index]), to = parse_time(w_[from_index + 1]);
    if (!from || !to || *to < *from) {
      bad("bad " + w_[0] + " record");
      return std::nullopt;
    }
    stamps_.emplace_back(*from, line_);
    stamps_.emplace_back(*to, line_);
    return interval_event{kind, target, *from, *to, line_, ""};
  }

  /// Everything happened between begin and finish, on the one true clock. A record outside was
  /// dated by a clock that is off (a clock-fault node's, which only its s3lect may run on): its
  /// times say nothing. The slack spares times rounded up (reaped); a leaked offset is minutes.
  void check_span() {
    constexpr micros span_slack = 1'000'000;
    for (const auto& [t, line] : stamps_) {
      if (!have_begin_ || !have_finish_) break;
      if (t >= log_.begin - span_slack && t <= log_.finish + span_slack) continue;
      log_.errors.push_back("line " + std::to_string(line.number) + ": time " +
                            (t < log_.begin ? "before begin" : "after finish") +
                            " (a node's clock in the log?): " + line.text);
    }
  }

  /// Command `i` ends when its tree does; without a tree record, at its own end record, else
  /// at the first later death of its node (or pid), else never.
  void end_of(child_run& run, std::size_t i) {
    if (tree_ends_[i]) {
      // The command is in its tree, so its end record cannot be later; were it, by a clock
      // step, the later time is the safe one.
      run.end = std::max(*tree_ends_[i], command_ends_[i].value_or(*tree_ends_[i]));
      run.end_source = "treeend";
      run.end_line = tree_lines_.at(i);
      return;
    }
    if (log_.trees_watched) {
      log_.errors.push_back("line " + std::to_string(run.start_line.number) +
                            ": no treeend record for this command's tree: " + run.start_line.text);
    }
    if (command_ends_[i]) {
      run.end = *command_ends_[i];
      run.end_source = "end";
      run.end_line = run.command_end_line;
      return;
    }
    const death* first = nullptr;
    for (const auto& d : deaths_) {
      if (d.node != run.node || d.at < run.start || (d.pid != 0 && d.pid != run.pid)) continue;
      if (!first || d.at < first->at) first = &d;
    }
    if (first) {
      run.end = first->at;
      run.end_source = first->source;
      run.end_line = first->line;
    } else {
      run.end = std::max(log_.finish, run.start);
      run.end_source = "finish";
    }
  }

  chaos_log log_;
  std::vector<std::string> w_;
  log_line line_;
  std::vector<death> deaths_;
  std::vector<std::optional<micros>> command_ends_;  // per command, its `end` record's time
  std::vector<std::optional<micros>> tree_ends_;     // per command, its `treeend` record's time
  std::map<std::size_t, log_line> tree_lines_;
  std::vector<std::pair<micros, log_line>> stamps_;  // every time in a record, for the span check
  bool have_begin_ = false;
  bool have_finish_ = false;
};

}  // namespace

chaos_log parse_chaos_log(std::istream& in) {
  log_parser parser;
  std::string text;
  for (int number = 1; std::getline(in, text); ++number) parser.read(text, number);
  return parser.finish();
}

}  // namespace s3lect::chaos
