// Log lines of the s3lect tool: the elector's lines split into message and fields, written as
// logfmt text or JSON lines; and the JSON text helpers behind them.
#include "cli/log_output.hpp"
#include "cli/json_text.hpp"

#include "base/log_text.hpp"

#include <gtest/gtest.h>

using namespace std::chrono_literals;
using s3lect::log_level;
using s3lect::cli::format_log_line;
using s3lect::cli::format_utc_ms;
using s3lect::cli::json_quote;
using s3lect::cli::log_event;
using s3lect::cli::log_field;
using s3lect::cli::log_format;
using s3lect::cli::split_log_line;

namespace {

const std::chrono::system_clock::time_point noon =
    std::chrono::sys_days{std::chrono::year{2026} / 11 / 21} + 10h + 30min + 45s + 123ms;

TEST(SplitLogLine, SeparatesMessageAndFields) {
  auto event = split_log_line("leadership gained term=3 id=host:12");
  EXPECT_EQ(event.message, "leadership gained");
  EXPECT_EQ(event.fields, (std::vector<log_field>{{"term", 3}, {"id", "host:12"}}));
}

TEST(SplitLogLine, KeepsUnquotedValuesWithSpacesWhole) {
  auto event = split_log_line("read failed error=connection failed: Connection refused id=n1");
  EXPECT_EQ(event.message, "read failed");
  EXPECT_EQ(event.fields, (std::vector<log_field>{
                              {"error", "connection failed: Connection refused"}, {"id", "n1"}}));
}

TEST(SplitLogLine, UnquotesQuotedValuesEvenWhenTheyLookLikeFields) {
  auto event = split_log_line("on_acquire hook failed, resigning error=\"boom x=1\" id=n1");
  EXPECT_EQ(event.message, "on_acquire hook failed, resigning");
  EXPECT_EQ(event.fields, (std::vector<log_field>{{"error", "boom x=1"}, {"id", "n1"}}));
}

TEST(SplitLogLine, HandlesMessagesAloneAndFieldsAlone) {
  EXPECT_EQ(split_log_line("stopped").message, "stopped");
  EXPECT_TRUE(split_log_line("stopped").fields.empty());
  auto fields_only = split_log_line("term=4");
  EXPECT_EQ(fields_only.message, "");
  EXPECT_EQ(fields_only.fields, (std::vector<log_field>{{"term", 4}}));
  auto empty_value = split_log_line("released reason= id=x");
  EXPECT_EQ(empty_value.fields, (std::vector<log_field>{{"reason", ""}, {"id", "x"}}));
}

TEST(FormatLogLine, WritesLogfmtTextQuotingWhereNeeded) {
  log_event event{"became leader",
                  {{"term", 3}, {"lock", "s3://b/k"}, {"error", "a \"b\" c"}, {"empty", ""}}};
  EXPECT_EQ(format_log_line(log_format::text, noon, log_level::info, event),
            "time=2026-11-21T10:30:45.123Z level=info msg=\"became leader\" term=3 "
            "lock=s3://b/k error=\"a \\\"b\\\" c\" empty=\"\"");
}

TEST(FormatLogLine, WritesJsonWithNumbersAndBooleans) {
  log_event event{"leader changed",
                  {{"term", 42},
                   {"self", false},
                   {"holder", "api-7"},
                   {"big", "0123"},
                   {"after_ms", -5},
                   {"id", "-1"},
                   {"flag", "true"}}};
  EXPECT_EQ(format_log_line(log_format::json, noon, log_level::warning, event),
            "{\"time\":\"2026-11-21T10:30:45.123Z\",\"level\":\"warning\",\"msg\":\"leader "
            "changed\",\"term\":42,\"self\":false,\"holder\":\"api-7\",\"big\":\"0123\","
            "\"after_ms\":-5,\"id\":\"-1\",\"flag\":\"true\"}");
}

/// The library's own line for hostile values: each value is one field, whatever it holds.
std::string election_started(const std::string& key, const std::string& id) {
  return "election started key=" + s3lect::log_text::value(key) +
         " id=" + s3lect::log_text::value(id);
}

const std::vector<std::string> hostile_values = {
    "a\n b=c", "new\nline",        "say \"hi\" id=x", "-1", "true",
    "42",      "bell\x07\x1b[31m", "back\\slash",     "",   "caf\xc3\xa9 \xff"};

TEST(HostileValues, SurviveTheLibraryLineWholeAndStayStrings) {
  for (const std::string& value : hostile_values) {
    SCOPED_TRACE(s3lect::log_text::quote(value));
    const log_event event = split_log_line(election_started(value, value));
    EXPECT_EQ(event.message, "election started");
    log_field expected{"key", value};
    ASSERT_EQ(event.fields.size(), 2u);
    EXPECT_EQ(event.fields[0], expected);
    expected.key = "id";
    EXPECT_EQ(event.fields[1], expected);
  }
}

TEST(HostileValues, TextAndJsonLinesStayOneLineAndStrings) {
  for (const std::string& value : hostile_values) {
    SCOPED_TRACE(s3lect::log_text::quote(value));
    const log_event event = split_log_line(election_started("k", value));
    const std::string text = format_log_line(log_format::text, noon, log_level::info, event);
    const std::string json = format_log_line(log_format::json, noon, log_level::info, event);
    for (const std::string* line : {&text, &json}) {
      for (const unsigned char c : *line) EXPECT_GE(c, 0x20) << "a raw control byte";
    }
    EXPECT_NE(json.find(",\"id\":" + json_quote(value)), std::string::npos) << json;
    // Read back by the same splitter, the text line gives the value back as a string.
    const log_event reread = split_log_line(text.substr(text.find(" id=") + 1));
    ASSERT_EQ(reread.fields.size(), 1u);
    EXPECT_EQ(reread.fields[0], (log_field{"id", value}));
  }
}

TEST(FormatLogLine, DropsRepeatedAndReservedKeys) {
  log_event event{"x", {{"id", "first"}, {"id", "second"}, {"level", "fake"}, {"msg", "fake"}}};
  EXPECT_EQ(format_log_line(log_format::text, noon, log_level::error, event),
            "time=2026-11-21T10:30:45.123Z level=error msg=\"x\" id=first");
}

TEST(ParseLogOptions, AcceptsTheDocumentedNames) {
  EXPECT_EQ(s3lect::cli::parse_log_level("trace"), log_level::trace);
  EXPECT_EQ(s3lect::cli::parse_log_level("warning"), log_level::warning);
  EXPECT_EQ(s3lect::cli::parse_log_level("warn"), log_level::warning);
  EXPECT_FALSE(s3lect::cli::parse_log_level("INFO"));
  EXPECT_EQ(s3lect::cli::parse_log_format("json"), log_format::json);
  EXPECT_FALSE(s3lect::cli::parse_log_format("logfmt"));
}

TEST(LogOutput, LibraryLoggerHonoursTheLevel) {
  s3lect::cli::log_output output(log_format::text, log_level::warning, {});
  const auto logger = output.library_logger();
  EXPECT_FALSE(logger.enabled(log_level::info));
  EXPECT_TRUE(logger.enabled(log_level::warning));
  EXPECT_FALSE(output.enabled(log_level::debug));
}

TEST(JsonQuote, EscapesWhatJsonRequiresAndInvalidUtf8) {
  EXPECT_EQ(json_quote("plain"), "\"plain\"");
  EXPECT_EQ(json_quote("q\"b\\"), "\"q\\\"b\\\\\"");
  EXPECT_EQ(json_quote("a\nb\tc\x01"), "\"a\\nb\\tc\\u0001\"");
  EXPECT_EQ(json_quote("caf\xc3\xa9"), "\"caf\xc3\xa9\"");
  EXPECT_EQ(json_quote("bad\xff"), "\"bad\\u00ff\"");
  EXPECT_EQ(json_quote("cut\xc3"), "\"cut\\u00c3\"");
}

TEST(FormatUtcMs, WritesRfc3339WithMilliseconds) {
  EXPECT_EQ(format_utc_ms(noon), "2026-11-21T10:30:45.123Z");
  EXPECT_EQ(format_utc_ms(std::chrono::system_clock::time_point{}), "1970-01-01T00:00:00.000Z");
}

}  // namespace
