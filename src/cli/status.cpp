#include "cli/status.hpp"

#include "cli/console.hpp"
#include "cli/exit_codes.hpp"
#include "cli/json_text.hpp"
#include "cli/lock_reader.hpp"
#include "cli/run_extra_options.hpp"
#include "cli/run_to_completion.hpp"
#include "cli/status_watch.hpp"
#include "cli/store_client.hpp"
#include "cli/store_options.hpp"

#include "base/log_text.hpp"

#include <boost/asio/io_context.hpp>

namespace s3lect::cli {

namespace asio = boost::asio;
using std::chrono::system_clock;

namespace {

/// Go's zero time.Time, which released records carry as lastUpdated.
constexpr const char* go_zero_time = "0001-01-01T00:00:00Z";

/// Of a malformed record, this many bytes at most are shown, escaped: enough to recognise what
/// was written there, never the body itself (an unreadable 20 MB object once printed 6 MB).
constexpr std::size_t max_preview_bytes = 256;

/// The record's age on the store's clock, and this machine's clock offset to the store's.
store_timing timing_of(const lock_read& read) {
  using std::chrono::milliseconds;
  store_timing timing;
  if (const auto offset = clock_offset_of(read.info, system_clock::now())) {
    timing.clock_offset = std::chrono::round<milliseconds>(offset->offset);
    timing.clock_offset_bound = std::chrono::ceil<milliseconds>(offset->error_bound);
  }
  if (read.found && read.found->last_modified && read.info.server_date) {
    timing.store_age =
        std::chrono::floor<milliseconds>(*read.info.server_date - *read.found->last_modified);
  }
  return timing;
}

/// For a key with no record whose slot 0 has one: it is the base key of `run --slots`, whose
/// records are at KEY.slot-N. Empty otherwise.
std::string slots_hint(asio::io_context& io, storage& client, const store_target& target) {
  io.restart();
  const lock_read slot =
      run_to_completion(io, read_lock(client, slot_key(target.key, 0), retry_policy{}));
  if (slot.error || !slot.found) return {};
  // Escaped as every value in a message is (a key may hold a newline).
  return " (the base key of `s3lect run --slots`: its records are at " +
         log_text::value(target.url() + ".slot-N") + ", N from 0; read one with --lock " +
         log_text::value(target.url() + ".slot-0") + ")";
}

}  // namespace

void coordination_json(json_object& out, const lock_record& record) {
  if (record.priority) out.add_number("priority", *record.priority);
  if (!record.candidates.empty()) {
    std::string list = "[";
    for (const ranked_candidate& candidate : record.candidates) {
      if (list.size() > 1) list += ',';
      list += "{\"id\":" + json_quote(candidate.id) +
              ",\"priority\":" + std::to_string(candidate.priority) + "}";
    }
    out.add_raw("candidates", list + "]");
  }
  if (!record.successor.empty()) out.add_string("successor", record.successor);
  if (record.handover) out.add_number("handoverMs", record.handover->count());
  if (!record.keep_out.empty()) out.add_string("keepOut", record.keep_out);
}

std::string status_help() {
  return std::string(
             "usage: s3lect status --lock s3://BUCKET/KEY [options]\n"
             "Reads the lock record and prints it as one JSON object on stdout, e.g.\n"
             "  {\"lock\":\"s3://b/k\",\"etag\":\"…\",\"leaderID\":\"api-7\",\"leaderAddr\":"
             "\"10.0.1.42:8443\",\n"
             "   \"lastUpdated\":\"2026-11-21T10:30:45.123Z\",\"term\":42,\"leaseMs\":15000,\n"
             "   "
             "\"released\":false,\"nonce\":\"9f1c2a7e5b3d4c11\",\"ageMs\":1234,\"expired\":false,\n"
             "   \"storeAgeMs\":1000,\"clockOffsetMs\":-3,\"clockOffsetBoundMs\":502}\n"
             "peerKeyPin follows nonce when the leader runs zero-configuration peer TLS: the\n"
             "sha256 pin of its health endpoint's public key, which its followers trust.\n"
             "Coordination fields follow, each only when the record has it: priority (the\n"
             "writer's --priority), candidates ([{\"id\",\"priority\"}], the leader's watching\n"
             "followers, best first), and in a released record successor (who should take over\n"
             "first), keepOut (the holder `s3lect release` put out) and handoverMs (how long\n"
             "the others hold off).\n"
             "leaseMs is null for records of Go writers. ageMs is this machine's clock minus\n"
             "lastUpdated (null when lastUpdated is Go's zero time, which marks a release).\n"
             "storeAgeMs is the record's age on the store's clock (the answer's Date minus the\n"
             "object's Last-Modified, whole seconds). expired is true when the record is\n"
             "released or its age >= leaseMs: by storeAgeMs when the store dates its answers,\n"
             "else by ageMs, with no allowance for clock skew. clockOffsetMs is the store's\n"
             "clock minus this machine's (true within +-clockOffsetBoundMs): a wrong clock\n"
             "here shows as a wrong ageMs, never in the election, which trusts no node's clock.\n"
             "\n"
             "options:\n") +
         store_options_help() + status_watch_help() +
         "  --help                   print this help\n"
         "\n"
         "A record that cannot be parsed (exit 7) prints {\"lock\",\"etag\",\"error\",\n"
         "\"bodyBytes\",\"bodyTruncated\",\"preview\"}: the bytes read (a record read stops at\n"
         "1 MiB), whether there were more than the preview shows, and the first 256 of them,\n"
         "escaped.\n"
         "\n" +
         exit_code_table();
}

std::string status_json(const std::string& lock_url, const std::string& etag,
                        const lock_record& record, system_clock::time_point now,
                        const store_timing& store) {
  json_object out;
  out.add_string("lock", lock_url).add_string("etag", etag);
  out.add_string("leaderID", record.leader_id).add_string("leaderAddr", record.leader_addr);
  const bool zero_time = record.last_updated == system_clock::time_point{};
  out.add_string("lastUpdated", zero_time ? go_zero_time : format_utc_ms(record.last_updated));
  out.add_number("term", static_cast<std::int64_t>(record.term));
  if (record.lease) {
    out.add_number("leaseMs", record.lease->count());
  } else {
    out.add_null("leaseMs");
  }
  out.add_bool("released", record.released).add_string("nonce", record.nonce);
  // Only zero-configuration leaders publish a pin; CA-mode and Go records keep their old shape.
  if (!record.key_pin.empty()) out.add_string("peerKeyPin", record.key_pin);
  coordination_json(out, record);
  std::optional<std::int64_t> age_ms;
  if (!zero_time) {
    age_ms =
        std::chrono::duration_cast<std::chrono::milliseconds>(now - record.last_updated).count();
    out.add_number("ageMs", *age_ms);
  } else {
    out.add_null("ageMs");
  }
  const std::optional<std::int64_t> judged_age =
      store.store_age ? std::optional<std::int64_t>(store.store_age->count()) : age_ms;
  if (record.released) {
    out.add_bool("expired", true);
  } else if (record.lease && judged_age) {
    out.add_bool("expired", *judged_age >= record.lease->count());
  } else {
    out.add_null("expired");
  }
  const auto add_ms = [&out](const char* name, const std::optional<std::chrono::milliseconds>& v) {
    if (v) {
      out.add_number(name, v->count());
    } else {
      out.add_null(name);
    }
  };
  add_ms("storeAgeMs", store.store_age);
  add_ms("clockOffsetMs", store.clock_offset);
  add_ms("clockOffsetBoundMs", store.clock_offset_bound);
  return out.str();
}

std::string malformed_status_json(const std::string& lock_url, const std::string& etag,
                                  const std::string& error, const std::string& body,
                                  bool truncated) {
  json_object out;
  out.add_string("lock", lock_url).add_string("etag", etag).add_string("error", error);
  // What was read: the object may be larger still (truncated), which the number then says.
  out.add_number("bodyBytes", static_cast<std::int64_t>(body.size()));
  out.add_bool("bodyTruncated", truncated || body.size() > max_preview_bytes);
  out.add_string("preview", std::string_view(body).substr(0, max_preview_bytes));
  return out.str();
}

int run_status(const std::vector<std::string>& args) {
  std::string error;
  const auto parsed =
      parse_store_command(args, status_watch_valued_names(), error, status_watch_flag_names());
  if (parsed && parsed->has("help")) {
    print_out(status_help());
    return exit_ok;
  }
  std::optional<store_target> target;
  if (parsed) target = make_store_target(*parsed, error);
  if (!target) {
    print_err("s3lect status: " + error + "\n");
    return exit_usage;
  }
  if (parsed->has("watch")) return run_status_watch(*parsed, *target);
  for (const char* option : {"json", "interval", "peer-ca"}) {
    if (parsed->has(option)) {
      print_err(std::string("s3lect status: --") + option + ": only with --watch\n");
      return exit_usage;
    }
  }

  asio::io_context io;
  store_client client(io.get_executor(), *target);
  const lock_read read = run_to_completion(io, read_lock(client, target->key, retry_policy{}));

  const std::string url = target->url();
  const std::string shown_url = log_text::value(url);
  if (read.error) {
    print_err("s3lect status: cannot read " + shown_url + " at " + client.endpoint() + ": " +
              describe_store_error(read.error, read.info) + "\n");
    return exit_store_error;
  }
  if (!read.found) {
    print_err("s3lect status: no lock record at " + shown_url + slots_hint(io, client, *target) +
              "\n");
    return exit_no_record;
  }
  if (!read.decoded.record) {
    const std::string problem = "malformed lock record: " + read.decoded.message;
    print_out(malformed_status_json(url, read.found->etag, problem, read.found->body,
                                    read.found->truncated) +
              "\n");
    print_err("s3lect status: " + shown_url + ": " + problem + "\n");
    return exit_malformed_record;
  }
  print_out(status_json(url, read.found->etag, *read.decoded.record, system_clock::now(),
                        timing_of(read)) +
            "\n");
  return exit_ok;
}

}  // namespace s3lect::cli
