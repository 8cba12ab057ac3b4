#include "cli/leadership_watch.hpp"

#include "cli/json_text.hpp"

#include <algorithm>

namespace s3lect::cli {

using std::chrono::milliseconds;
using steady = std::chrono::steady_clock;

namespace {

/// Go writers do not record their lease; theirs is 15 s unless configured otherwise.
constexpr milliseconds go_default_lease{std::chrono::seconds{15}};

/// A value of a key=value text line, quoted when it would not read back as one token.
std::string text_value(const std::string& value) {
  if (!value.empty() && value.find_first_of(" \"=\t\n") == std::string::npos) return value;
  return json_quote(value);
}

}  // namespace

leadership_state leadership_watch::judge(steady::time_point now,
                                         const lock_observation& read) const {
  if (!read.found) return {"none", {}, {}, 0, {}};
  if (!read.record) return {"unreadable", {}, {}, 0, {}};
  const lock_record& record = *read.record;
  leadership_state state{"leading", record.leader_id, record.leader_addr, record.term, {}};
  if (record.released) {
    state.state = "released";
    state.successor = record.successor;
    return state;
  }
  const auto unchanged = std::chrono::duration_cast<milliseconds>(now - etag_seen_);
  if (unchanged + age_when_seen_ >= record.lease.value_or(go_default_lease)) {
    state.state = "expired";
  }
  return state;
}

std::optional<leadership_state> leadership_watch::observe(steady::time_point now,
                                                          const lock_observation& read) {
  if (!read.found || read.etag != etag_) {
    etag_ = read.found ? read.etag : std::string();
    etag_seen_ = now;
    age_when_seen_ = std::max(read.store_age.value_or(milliseconds::zero()), milliseconds::zero());
  }
  leadership_state state = judge(now, read);
  if (last_ == state) return std::nullopt;
  last_ = state;
  return state;
}

const char* to_string(change_source source) noexcept {
  return source == change_source::peer ? "peer" : "s3";
}

std::string watch_text_line(const leadership_state& state, change_source source,
                            std::chrono::system_clock::time_point now) {
  std::string line =
      "time=" + format_utc_ms(now) + " source=" + to_string(source) + " state=" + state.state;
  if (state.state == "none" || state.state == "unreadable") return line;
  line += " leader=" + text_value(state.leader_id);
  line += " term=" + std::to_string(state.term);
  if (!state.leader_addr.empty()) line += " addr=" + text_value(state.leader_addr);
  if (!state.successor.empty()) line += " successor=" + text_value(state.successor);
  return line;
}

std::string watch_json_line(const std::string& lock_url, const leadership_state& state,
                            change_source source, std::chrono::system_clock::time_point now) {
  json_object out;
  out.add_string("time", format_utc_ms(now)).add_string("lock", lock_url);
  out.add_string("source", to_string(source));
  out.add_string("state", state.state);
  if (state.state == "none" || state.state == "unreadable") {
    out.add_null("leaderID").add_null("leaderAddr").add_null("term");
  } else {
    out.add_string("leaderID", state.leader_id).add_string("leaderAddr", state.leader_addr);
    out.add_number("term", static_cast<std::int64_t>(state.term));
  }
  if (!state.successor.empty()) out.add_string("successor", state.successor);
  return out.str();
}

}  // namespace s3lect::cli
