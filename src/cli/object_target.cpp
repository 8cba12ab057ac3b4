#include "cli/object_target.hpp"

#include "cli/lock_reader.hpp"

#include <s3lect/error.hpp>

#include <string_view>

namespace s3lect::cli {

std::optional<object_command> parse_object_command(const std::vector<std::string>& args,
                                                   const std::vector<std::string>& extra_flags,
                                                   const std::vector<std::string>& extra_valued,
                                                   bool& help, std::string& error) {
  const store_command_names names = store_command_option_names(extra_flags, extra_valued);
  auto parsed = parsed_args::parse(args, names.flags, names.valued, error);
  if (!parsed) return std::nullopt;
  help = parsed->has("help");
  if (help) return std::nullopt;
  if (parsed->has("lock")) {
    error = "--lock does not apply: name the object as s3://BUCKET/KEY or az://CONTAINER/BLOB";
    return std::nullopt;
  }
  if (parsed->positional().size() != 1 || !parsed->trailing().empty()) {
    error = parsed->positional().empty()
                ? "missing the object s3://BUCKET/KEY or az://CONTAINER/BLOB"
                : "expected exactly one object s3://BUCKET/KEY or az://CONTAINER/BLOB";
    return std::nullopt;
  }
  // make_store_target reads the location from --lock: hand it the object instead.
  std::vector<std::string> with_location;
  for (const std::string& arg : args) {
    if (arg != parsed->positional()[0]) with_location.push_back(arg);
  }
  with_location.push_back("--lock=" + parsed->positional()[0]);
  auto located = parsed_args::parse(with_location, names.flags, names.valued, error);
  if (!located) return std::nullopt;
  auto target = make_store_target(*located, error);
  if (!target) return std::nullopt;
  return object_command{std::move(*located), std::move(*target)};
}

std::string object_store_options_help() {
  // Every store option but --lock, whose line is the first.
  const std::string_view all = store_options_help();
  const std::size_t first_line_end = all.find('\n');
  const bool starts_with_lock = all.substr(0, first_line_end).find("--lock") != std::string::npos;
  return std::string(starts_with_lock ? all.substr(first_line_end + 1) : all);
}

std::string describe_object_error(const boost::system::error_code& error,
                                  const response_info& info) {
  // The library's text for the code speaks of lock records; here the object is the user's.
  if (error == errc::malformed_record) return "malformed fenced object: " + info.message;
  return describe_store_error(error, info);
}

}  // namespace s3lect::cli
