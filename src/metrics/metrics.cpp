// Rendering of elector metrics in the Prometheus text exposition format 0.0.4:
// https://prometheus.io/docs/instrumenting/exposition_formats/
#include <s3lect/error.hpp>
#include <s3lect/metrics.hpp>

#include "label_text.hpp"

#include <boost/system/system_error.hpp>

#include <algorithm>
#include <string_view>

namespace s3lect::inline v1 {

namespace {

[[noreturn]] void throw_invalid(const std::string& message) {
  throw boost::system::system_error(errc::invalid_config, message);
}

bool is_label_name(std::string_view name) {
  if (name.empty() || name.substr(0, 2) == "__") return false;
  const auto letter = [](char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); };
  if (!letter(name.front()) && name.front() != '_') return false;
  return std::all_of(name.begin(), name.end(),
                     [&](char c) { return letter(c) || c == '_' || (c >= '0' && c <= '9'); });
}

bool is_utf8(std::string_view text) {
  std::size_t i = 0;
  while (i < text.size()) {
    const auto lead = static_cast<unsigned char>(text[i]);
    std::size_t length = 0;
    std::uint32_t code = 0;
    if (lead < 0x80) {
      ++i;
      continue;
    } else if ((lead & 0xE0) == 0xC0) {
      length = 2;
      code = lead & 0x1F;
    } else if ((lead & 0xF0) == 0xE0) {
      length = 3;
      code = lead & 0x0F;
    } else if ((lead & 0xF8) == 0xF0) {
      length = 4;
      code = lead & 0x07;
    } else {
      return false;
    }
    if (i + length > text.size()) return false;
    for (std::size_t k = 1; k < length; ++k) {
      const auto next = static_cast<unsigned char>(text[i + k]);
      if ((next & 0xC0) != 0x80) return false;
      code = (code << 6) | (next & 0x3F);
    }
    // Overlong forms, surrogates and code points past U+10FFFF are not UTF-8.
    static constexpr std::uint32_t smallest[] = {0, 0, 0x80, 0x800, 0x10000};
    if (code < smallest[length] || code > 0x10FFFF || (code >= 0xD800 && code <= 0xDFFF)) {
      return false;
    }
    i += length;
  }
  return true;
}

/// Names the series of one elector use themselves; an extra label may not take them.
constexpr std::string_view reserved_labels[] = {"lock", "id", "operation", "outcome", "le"};

void check_extra_labels(const std::vector<metric_label>& labels) {
  for (std::size_t i = 0; i < labels.size(); ++i) {
    const metric_label& label = labels[i];
    if (!is_label_name(label.name)) {
      throw_invalid("metric label '" + label.name +
                    "': a name must match [a-zA-Z_][a-zA-Z0-9_]* and not start with __");
    }
    if (std::find(std::begin(reserved_labels), std::end(reserved_labels), label.name) !=
        std::end(reserved_labels)) {
      throw_invalid("metric label '" + label.name + "': s3lect's series use this name");
    }
    for (std::size_t j = 0; j < i; ++j) {
      if (labels[j].name == label.name) throw_invalid("metric label '" + label.name + "': twice");
    }
    if (!is_utf8(label.value)) throw_invalid("metric label '" + label.name + "': not UTF-8");
  }
}

/// `value / 10^decimals` as a decimal without trailing zeros: 5 ms with 3 decimals is 0.005.
std::string fixed_point(std::uint64_t value, int decimals) {
  std::uint64_t scale = 1;
  for (int i = 0; i < decimals; ++i) scale *= 10;
  std::string text = std::to_string(value / scale);
  std::string fraction = std::to_string(value % scale);
  fraction.insert(0, static_cast<std::size_t>(decimals) - fraction.size(), '0');
  while (!fraction.empty() && fraction.back() == '0') fraction.pop_back();
  if (!fraction.empty()) text += "." + fraction;
  return text;
}

/// `us` microseconds in seconds, with a sign when negative.
std::string seconds_of(std::chrono::microseconds us) {
  const std::int64_t count = us.count();
  const std::uint64_t magnitude =
      count < 0 ? 0 - static_cast<std::uint64_t>(count) : static_cast<std::uint64_t>(count);
  return (count < 0 ? "-" : "") + fixed_point(magnitude, 6);
}

/// Writes the families one after another; every sample carries its elector's labels first.
class exposition {
 public:
  void family(std::string_view name, std::string_view type, std::string_view help) {
    out_ += "# HELP ";
    out_ += name;
    out_ += ' ';
    out_ += help;  // Our help texts hold no backslash or line feed: nothing to escape.
    out_ += "\n# TYPE ";
    out_ += name;
    out_ += ' ';
    out_ += type;
    out_ += '\n';
  }

  void sample(std::string_view name, const elector_metrics& elector,
              std::initializer_list<metric_label> labels, std::string_view value) {
    out_ += name;
    out_ += '{';
    bool first = true;
    const auto add = [&](const metric_label& label) {
      if (!first) out_ += ',';
      first = false;
      out_ += label.name;
      out_ += '=';
      append_label_value(out_, label.value);
    };
    for (const metric_label& label : elector.labels) add(label);
    for (const metric_label& label : labels) add(label);
    out_ += "} ";
    out_ += value;
    out_ += '\n';
  }

  void sample(std::string_view name, const elector_metrics& elector,
              std::initializer_list<metric_label> labels, std::uint64_t value) {
    sample(name, elector, labels, std::to_string(value));
  }

  std::string take() { return std::move(out_); }

 private:
  std::string out_;
};

struct outcome_count {
  const char* outcome;
  std::uint64_t request_counts::*field;
};

constexpr outcome_count s3_outcomes[] = {
    {"ok", &request_counts::ok},
    {"not_found", &request_counts::not_found},
    {"precondition_failed", &request_counts::precondition_failed},
    {"failed", &request_counts::failed},
};

// A peer check has no condition that can fail.
constexpr outcome_count peer_outcomes[] = {
    {"ok", &request_counts::ok},
    {"not_found", &request_counts::not_found},
    {"failed", &request_counts::failed},
};

struct simple_series {
  const char* name;
  const char* type;
  const char* help;
  std::uint64_t (*value)(const elector_metrics&);
};

constexpr simple_series simple[] = {
    {"s3lect_acquisitions_total", "counter", "Leaderships gained.",
     [](const elector_metrics& m) { return m.counters.acquisitions; }},
    {"s3lect_renewals_total", "counter", "Successful renewals of the lock record.",
     [](const elector_metrics& m) { return m.counters.renewals; }},
    {"s3lect_losses_total", "counter", "Leaderships lost, whatever the reason.",
     [](const elector_metrics& m) { return m.counters.losses; }},
    {"s3lect_demotions_total", "counter",
     "Leaderships lost because no renewal succeeded by the renew deadline.",
     [](const elector_metrics& m) { return m.counters.demotions; }},
    {"s3lect_is_leader", "gauge", "1 while this elector holds leadership, else 0.",
     [](const elector_metrics& m) -> std::uint64_t { return m.is_leader ? 1 : 0; }},
    {"s3lect_term", "gauge",
     "Term of the lock record last seen or written (the leader's fencing token).",
     [](const elector_metrics& m) { return m.term; }},
    {"s3lect_consecutive_failures", "gauge",
     "Storage operations in a row that failed after all their retries; a success resets it.",
     [](const elector_metrics& m) -> std::uint64_t { return m.consecutive_failures; }},
};

}  // namespace

elector_metrics collect_metrics(const elector& election, std::vector<metric_label> extra_labels) {
  check_extra_labels(extra_labels);
  const leadership_status status = election.status();
  elector_metrics metrics;
  metrics.labels.push_back({"lock", status.lock_key});
  metrics.labels.push_back({"id", status.server_id});
  for (metric_label& label : extra_labels) metrics.labels.push_back(std::move(label));
  metrics.counters = election.counters();
  metrics.is_leader = status.is_leader;
  metrics.term = status.term;
  metrics.consecutive_failures = status.consecutive_failures;
  metrics.clock_offset = status.clock_offset;
  metrics.priority = election.config().coordination.priority;
  for (const candidate_info& candidate : status.candidates) {
    ++(candidate.verified ? metrics.verified_candidates : metrics.unverified_candidates);
  }
  return metrics;
}

namespace {

void write_request_counts(exposition& out, const std::vector<elector_metrics>& electors) {
  out.family("s3lect_s3_requests_total", "counter",
             "Requests for the lock record, retries included, by operation and outcome.");
  for (const elector_metrics& elector : electors) {
    for (const auto& [operation, counts] :
         {std::pair{"get", &elector.counters.s3_get}, std::pair{"put", &elector.counters.s3_put}}) {
      for (const outcome_count& outcome : s3_outcomes) {
        out.sample("s3lect_s3_requests_total", elector,
                   {{"operation", operation}, {"outcome", outcome.outcome}},
                   (*counts).*outcome.field);
      }
    }
  }
  out.family("s3lect_peer_checks_total", "counter",
             "Peer-mode health checks of the leader, retries included, by outcome.");
  for (const elector_metrics& elector : electors) {
    for (const outcome_count& outcome : peer_outcomes) {
      out.sample("s3lect_peer_checks_total", elector, {{"outcome", outcome.outcome}},
                 elector.counters.peer_check.*outcome.field);
    }
  }
}

// Unknown before the store's first answer: no sample rather than a made-up zero.
void write_clock_offsets(exposition& out, const std::vector<elector_metrics>& electors) {
  out.family("s3lect_clock_offset_seconds", "gauge",
             "The store's clock minus this node's wall clock, from the Date of the store's "
             "answers.");
  for (const elector_metrics& elector : electors) {
    if (!elector.clock_offset) continue;
    out.sample("s3lect_clock_offset_seconds", elector, {},
               seconds_of(elector.clock_offset->offset));
  }
  out.family("s3lect_clock_offset_error_bound_seconds", "gauge",
             "The true clock offset lies within s3lect_clock_offset_seconds plus or minus this.");
  for (const elector_metrics& elector : electors) {
    if (!elector.clock_offset) continue;
    out.sample("s3lect_clock_offset_error_bound_seconds", elector, {},
               seconds_of(elector.clock_offset->error_bound));
  }
}

void write_renewal_latency(exposition& out, const std::vector<elector_metrics>& electors) {
  out.family("s3lect_renewal_latency_seconds", "histogram",
             "Time from sending a renewal's first attempt to its success.");
  for (const elector_metrics& elector : electors) {
    const latency_histogram& histogram = elector.counters.renewal_latency;
    std::uint64_t cumulative = 0;
    for (std::size_t i = 0; i < histogram.bounds_ms.size(); ++i) {
      cumulative += histogram.counts[i];
      out.sample("s3lect_renewal_latency_seconds_bucket", elector,
                 {{"le", fixed_point(static_cast<std::uint64_t>(histogram.bounds_ms[i]), 3)}},
                 cumulative);
    }
    out.sample("s3lect_renewal_latency_seconds_bucket", elector, {{"le", "+Inf"}}, histogram.count);
    out.sample(
        "s3lect_renewal_latency_seconds_sum", elector, {},
        fixed_point(static_cast<std::uint64_t>(std::max<std::int64_t>(histogram.sum.count(), 0)),
                    6));
    out.sample("s3lect_renewal_latency_seconds_count", elector, {}, histogram.count);
  }
}

}  // namespace

std::string prometheus_text(const std::vector<elector_metrics>& electors) {
  exposition out;
  write_request_counts(out, electors);
  for (const simple_series& series : simple) {
    out.family(series.name, series.type, series.help);
    for (const elector_metrics& elector : electors) {
      out.sample(series.name, elector, {}, series.value(elector));
    }
  }
  // Signed, unlike the series above.
  out.family("s3lect_priority", "gauge",
             "This node's coordination priority: higher is preferred to lead.");
  for (const elector_metrics& elector : electors) {
    out.sample("s3lect_priority", elector, {}, std::to_string(elector.priority));
  }
  // No id label: ids come from the network, and each would be a series (a cardinality attack).
  out.family("s3lect_candidates", "gauge",
             "While leading: candidates known to the health endpoint, by whether a client "
             "certificate or registration verified their claim.");
  for (const elector_metrics& elector : electors) {
    out.sample("s3lect_candidates", elector, {{"verified", "true"}},
               std::uint64_t{elector.verified_candidates});
    out.sample("s3lect_candidates", elector, {{"verified", "false"}},
               std::uint64_t{elector.unverified_candidates});
  }
  write_clock_offsets(out, electors);
  write_renewal_latency(out, electors);
  return out.take();
}

std::string prometheus_text(const elector& election) {
  return prometheus_text(std::vector<elector_metrics>{collect_metrics(election)});
}

void metrics_registry::add(const elector& election, std::vector<metric_label> extra_labels) {
  check_extra_labels(extra_labels);
  const elector_config config = election.config();
  const std::lock_guard lock(mutex_);
  for (const entry& existing : entries_) {
    if (existing.election == &election) throw_invalid("metrics_registry: elector added twice");
    const elector_config other = existing.election->config();
    const bool same_labels =
        other.lock_key == config.lock_key && other.server_id == config.server_id &&
        existing.extra_labels.size() == extra_labels.size() &&
        std::equal(extra_labels.begin(), extra_labels.end(), existing.extra_labels.begin(),
                   [](const metric_label& a, const metric_label& b) {
                     return a.name == b.name && a.value == b.value;
                   });
    if (same_labels) {
      throw_invalid("metrics_registry: another elector has the labels lock=" + config.lock_key +
                    " id=" + config.server_id + ": add an extra label to tell them apart");
    }
  }
  entries_.push_back({&election, std::move(extra_labels)});
}

void metrics_registry::remove(const elector& election) {
  const std::lock_guard lock(mutex_);
  std::erase_if(entries_, [&](const entry& e) { return e.election == &election; });
}

std::string metrics_registry::render() const {
  std::vector<elector_metrics> electors;
  {
    const std::lock_guard lock(mutex_);
    electors.reserve(entries_.size());
    for (const entry& e : entries_)
      electors.push_back(collect_metrics(*e.election, e.extra_labels));
  }
  return prometheus_text(electors);
}

}  // namespace s3lect::inline v1
