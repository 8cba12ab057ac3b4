#include "fault_proxy_control.hpp"

#include <charconv>

namespace s3lect::chaos {

fault_state combine(const fault_state& own, const fault_state& global) {
  fault_state out;
  for (const direction d : {direction::up, direction::down}) {
    out.at(d).latency = own.at(d).latency + global.at(d).latency;
    out.at(d).blackhole = own.at(d).blackhole || global.at(d).blackhole;
  }
  out.drop_new = own.drop_new || global.drop_new;
  return out;
}

std::optional<clock::time_point> forward_time(const fault_state& faults, direction d,
                                              clock::time_point read_at) {
  const direction_faults& f = faults.at(d);
  if (f.blackhole) return std::nullopt;
  return read_at + f.latency;
}

namespace {

std::vector<std::string_view> split_words(std::string_view line) {
  std::vector<std::string_view> words;
  std::size_t i = 0;
  while (i < line.size()) {
    while (i < line.size() && (line[i] == ' ' || line[i] == '\t' || line[i] == '\r')) ++i;
    const std::size_t start = i;
    while (i < line.size() && line[i] != ' ' && line[i] != '\t' && line[i] != '\r') ++i;
    if (i > start) words.push_back(line.substr(start, i - start));
  }
  return words;
}

bool parse_directions(std::string_view word, command& c) {
  if (word == "up") {
    c.up = true;
  } else if (word == "down") {
    c.down = true;
  } else if (word == "both") {
    c.up = c.down = true;
  } else {
    return false;
  }
  return true;
}

bool parse_on_off(std::string_view word, bool& on) {
  if (word == "on") {
    on = true;
  } else if (word == "off") {
    on = false;
  } else {
    return false;
  }
  return true;
}

std::string describe_state(const fault_state& s) {
  const auto side = [](const direction_faults& f) {
    return std::to_string(f.latency.count()) + "ms" + (f.blackhole ? "/blackhole" : "");
  };
  return "up=" + side(s.up) + " down=" + side(s.down) + " drop=" + (s.drop_new ? "on" : "off");
}

}  // namespace

std::variant<command, std::string> parse_command(std::string_view line) {
  const auto words = split_words(line);
  if (words.empty()) return std::string("empty command");
  command c;
  const std::string_view verb = words[0];
  const auto expect = [&](std::size_t count, const char* usage) -> std::optional<std::string> {
    if (words.size() == count) return std::nullopt;
    return std::string("usage: ") + usage;
  };
  if (verb == "status") {
    if (auto e = expect(1, "status")) return *e;
    c.what = command::kind::status;
    return c;
  }
  if (verb != "latency" && verb != "blackhole" && verb != "drop" && verb != "reset" &&
      verb != "heal") {
    return "unknown command " + std::string(verb) +
           " (latency, blackhole, drop, reset, heal, status)";
  }
  if (words.size() < 2) return "missing target after " + std::string(verb);
  c.target = std::string(words[1]);
  if (verb == "latency") {
    if (auto e = expect(4, "latency TARGET up|down|both MS")) return *e;
    c.what = command::kind::latency;
    if (!parse_directions(words[2], c))
      return "expected up, down or both, got " + std::string(words[2]);
    long value = -1;
    const auto [end, ec] =
        std::from_chars(words[3].data(), words[3].data() + words[3].size(), value);
    if (ec != std::errc{} || end != words[3].data() + words[3].size() || value < 0 ||
        value > 3'600'000) {
      return "expected milliseconds (0 to 3600000), got " + std::string(words[3]);
    }
    c.latency = milliseconds{value};
    return c;
  }
  if (verb == "blackhole") {
    if (auto e = expect(4, "blackhole TARGET up|down|both on|off")) return *e;
    c.what = command::kind::blackhole;
    if (!parse_directions(words[2], c))
      return "expected up, down or both, got " + std::string(words[2]);
    if (!parse_on_off(words[3], c.on)) return "expected on or off, got " + std::string(words[3]);
    return c;
  }
  if (verb == "drop") {
    if (auto e = expect(3, "drop TARGET on|off")) return *e;
    c.what = command::kind::drop;
    if (!parse_on_off(words[2], c.on)) return "expected on or off, got " + std::string(words[2]);
    return c;
  }
  if (verb == "reset") {
    if (auto e = expect(3, "reset TARGET client|server|both")) return *e;
    c.what = command::kind::reset;
    if (words[2] == "client") {
      c.side = reset_side::client;
    } else if (words[2] == "server") {
      c.side = reset_side::server;
    } else if (words[2] == "both") {
      c.side = reset_side::both;
    } else {
      return "expected client, server or both, got " + std::string(words[2]);
    }
    return c;
  }
  // heal, the only verb left
  if (auto e = expect(2, "heal TARGET")) return *e;
  c.what = command::kind::heal;
  return c;
}

fault_table::fault_table(std::vector<std::string> listener_names) {
  for (auto& name : listener_names) listeners_.emplace(std::move(name), fault_state{});
}

std::optional<std::vector<fault_state*>> fault_table::targets(const std::string& target,
                                                              bool allow_all) {
  std::vector<fault_state*> out;
  if (target == "global") {
    out.push_back(&global_);
  } else if (target == "all" && allow_all) {
    out.push_back(&global_);
    for (auto& [name, state] : listeners_) out.push_back(&state);
  } else if (auto it = listeners_.find(target); it != listeners_.end()) {
    out.push_back(&it->second);
  } else {
    return std::nullopt;
  }
  return out;
}

fault_table::outcome fault_table::apply(const command& c) {
  outcome out;
  if (c.what == command::kind::status) {
    out.reply = "ok " + describe();
    return out;
  }
  if (c.what == command::kind::reset) {
    if (c.target == "all") {
      for (const auto& [name, state] : listeners_) out.reset_listeners.push_back(name);
    } else if (knows(c.target)) {
      out.reset_listeners.push_back(c.target);
    } else {
      out.reply = "error unknown listener " + c.target;
      return out;
    }
    out.side = c.side;
    out.reply = "ok reset " + c.target;
    return out;
  }
  const auto states = targets(c.target, c.what == command::kind::heal);
  if (!states) {
    out.reply = "error unknown target " + c.target;
    return out;
  }
  for (fault_state* state : *states) {
    switch (c.what) {
      case command::kind::latency:
        if (c.up) state->up.latency = c.latency;
        if (c.down) state->down.latency = c.latency;
        break;
      case command::kind::blackhole:
        if (c.up) state->up.blackhole = c.on;
        if (c.down) state->down.blackhole = c.on;
        break;
      case command::kind::drop:
        state->drop_new = c.on;
        break;
      case command::kind::heal:
        *state = fault_state{};
        break;
      case command::kind::reset:
      case command::kind::status:
        break;
    }
  }
  out.reply = "ok " + describe();
  return out;
}

fault_state fault_table::effective(const std::string& name) const {
  const auto it = listeners_.find(name);
  return combine(it == listeners_.end() ? fault_state{} : it->second, global_);
}

std::string fault_table::describe() const {
  std::string text = "global: " + describe_state(global_);
  for (const auto& [name, state] : listeners_) text += "; " + name + ": " + describe_state(state);
  return text;
}

}  // namespace s3lect::chaos
