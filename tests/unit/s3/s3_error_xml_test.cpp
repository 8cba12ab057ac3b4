// Unit tests for src/s3_error_xml.{hpp,cpp} and src/etag.{hpp,cpp}.
// Bodies follow the shapes AWS S3 and Ceph RGW send; request and host ids are made up.
#include "s3_error_xml.hpp"
#include "etag.hpp"

#include <gtest/gtest.h>

#include <random>
#include <string>

namespace s3lect::detail {
namespace {

const std::string aws_precondition_failed =
    "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
    "<Error><Code>PreconditionFailed</Code>"
    "<Message>At least one of the pre-conditions you specified did not hold</Message>"
    "<Condition>If-Match</Condition><RequestId>K2H6N7ZGQT6WHCEG</RequestId>"
    "<HostId>WWoZlnK4pTjKCYn6eNV7GgOurabfqLkjbSyqTvDMGBaI9uwzyNhSaDhOCPs8paFGye7S6b/AB3A=</HostId>"
    "</Error>";

const std::string rgw_precondition_failed =
    "<?xml version=\"1.0\" encoding=\"UTF-8\"?><Error><Code>PreconditionFailed</Code>"
    "<BucketName>b</BucketName><RequestId>tx00000b6f4a2c1d9e8f7a6-0066f1e2d3-1015-default</"
    "RequestId>"
    "<HostId>1015-default-default</HostId></Error>";

TEST(parse_s3_error_xml, aws_precondition_failed) {
  const auto error = parse_s3_error_xml(aws_precondition_failed);
  ASSERT_TRUE(error);
  EXPECT_EQ(error->code, "PreconditionFailed");
  EXPECT_EQ(error->message, "At least one of the pre-conditions you specified did not hold");
  EXPECT_EQ(error->request_id, "K2H6N7ZGQT6WHCEG");
}

TEST(parse_s3_error_xml, aws_no_such_key_and_conflict) {
  const auto missing = parse_s3_error_xml(
      "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<Error><Code>NoSuchKey</Code>"
      "<Message>The specified key does not exist.</Message><Key>elections/leader</Key>"
      "<RequestId>4442587FB7D0A2F9</RequestId><HostId>abc=</HostId></Error>");
  ASSERT_TRUE(missing);
  EXPECT_EQ(missing->code, "NoSuchKey");
  EXPECT_EQ(missing->request_id, "4442587FB7D0A2F9");

  const auto conflict = parse_s3_error_xml(
      "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<Error><Code>ConditionalRequestConflict</Code>"
      "<Message>A conflicting operation occurred. If using PutObject you can retry the request."
      "</Message><RequestId>Q1W2E3R4T5Y6U7I8</RequestId><HostId>xyz=</HostId></Error>");
  ASSERT_TRUE(conflict);
  EXPECT_EQ(conflict->code, "ConditionalRequestConflict");
}

TEST(parse_s3_error_xml, ceph_rgw_body_without_message) {
  const auto error = parse_s3_error_xml(rgw_precondition_failed);
  ASSERT_TRUE(error);
  EXPECT_EQ(error->code, "PreconditionFailed");
  EXPECT_EQ(error->message, "");
  EXPECT_EQ(error->request_id, "tx00000b6f4a2c1d9e8f7a6-0066f1e2d3-1015-default");

  const auto unknown = parse_s3_error_xml(
      "<?xml version=\"1.0\" encoding=\"UTF-8\"?><Error><Code>UnknownError</Code>"
      "<BucketName>b</BucketName><RequestId>tx0000012</RequestId><HostId>h</HostId></Error>");
  ASSERT_TRUE(unknown);
  EXPECT_EQ(unknown->code, "UnknownError");
}

TEST(parse_s3_error_xml, pretty_printed_with_bom_comment_doctype_and_attributes) {
  const auto error = parse_s3_error_xml(
      "\xEF\xBB\xBF  \r\n<?xml version='1.0'?>\n<!-- proxied -->\n<!DOCTYPE Error>\n"
      "<Error xmlns=\"http://s3.amazonaws.com/doc/2006-03-01/\" note='a>b/'>\n"
      "  <Code>\n    SlowDown\n  </Code>\n"
      "  <Message>Please reduce your request rate.</Message >\n"
      "  <RequestId>R1</RequestId>\n"
      "</Error>\n");
  ASSERT_TRUE(error);
  EXPECT_EQ(error->code, "SlowDown");
  EXPECT_EQ(error->message, "Please reduce your request rate.");
  EXPECT_EQ(error->request_id, "R1");
}

TEST(parse_s3_error_xml, namespace_prefixes_are_ignored) {
  const auto error =
      parse_s3_error_xml("<s3:Error xmlns:s3=\"urn:x\"><s3:Code>AccessDenied</s3:Code></s3:Error>");
  ASSERT_TRUE(error);
  EXPECT_EQ(error->code, "AccessDenied");
}

TEST(parse_s3_error_xml, entities_are_unescaped) {
  const auto error = parse_s3_error_xml(
      "<Error><Code>SignatureDoesNotMatch</Code>"
      "<Message>a &lt;b&gt; &amp; &quot;c&quot; &apos;d&apos; &#65;&#x42;&#X43; &#x1F600; "
      "&#1082;</Message></Error>");
  ASSERT_TRUE(error);
  EXPECT_EQ(error->message, "a <b> & \"c\" 'd' ABC \xF0\x9F\x98\x80 \xD0\xBA");
}

TEST(parse_s3_error_xml, unknown_or_invalid_entities_stay_literal) {
  const auto error = parse_s3_error_xml(
      "<Error><Code>X</Code><Message>&nbsp; &#0; &#xD800; &#x110000; &#; &#x; &#12a; "
      "& alone &amp;lt; &#99999999999999999999; trailing &</Message></Error>");
  ASSERT_TRUE(error);
  EXPECT_EQ(error->message,
            "&nbsp; &#0; &#xD800; &#x110000; &#; &#x; &#12a; & alone &lt; "
            "&#99999999999999999999; trailing &");
}

TEST(parse_s3_error_xml, cdata_is_literal) {
  const auto error =
      parse_s3_error_xml("<Error><Code>X</Code><Message>a<![CDATA[<b> &amp;]]>c</Message></Error>");
  ASSERT_TRUE(error);
  EXPECT_EQ(error->message, "a<b> &amp;c");
}

TEST(parse_s3_error_xml, empty_elements_and_first_occurrence_wins) {
  const auto error = parse_s3_error_xml(
      "<Error><Message/><Code>First</Code><Code>Second</Code><Message>late</Message>"
      "<RequestId />"
      "</Error>");
  ASSERT_TRUE(error);
  EXPECT_EQ(error->code, "First");
  EXPECT_EQ(error->message, "");
  EXPECT_EQ(error->request_id, "");
}

TEST(parse_s3_error_xml, only_direct_children_of_error_count) {
  const auto error =
      parse_s3_error_xml("<Error><Details><Code>Nested</Code></Details><Code>Outer</Code></Error>");
  ASSERT_TRUE(error);
  EXPECT_EQ(error->code, "Outer");
  EXPECT_FALSE(parse_s3_error_xml("<Error><Details><Code>Nested</Code></Details></Error>"));
}

TEST(parse_s3_error_xml, no_usable_code_means_nullopt) {
  EXPECT_FALSE(parse_s3_error_xml("<Error><Message>m</Message></Error>"));
  EXPECT_FALSE(parse_s3_error_xml("<Error><Code></Code></Error>"));
  EXPECT_FALSE(parse_s3_error_xml("<Error><Code>  \n </Code></Error>"));
  EXPECT_FALSE(parse_s3_error_xml("<Error><Code/></Error>"));
  EXPECT_FALSE(parse_s3_error_xml("<Error/>"));
}

TEST(parse_s3_error_xml, other_roots_and_garbage_are_rejected) {
  const std::string inputs[] = {
      "",
      "   \n",
      "Internal Server Error",
      "{\"code\":\"PreconditionFailed\"}",
      "<html><body><h1>502 Bad Gateway</h1></body></html>",
      "<ErrorResponse><Error><Code>X</Code></Error></ErrorResponse>",
      "<ListBucketResult><Code>X</Code></ListBucketResult>",
      "text before <Error><Code>X</Code></Error>",
      "<",
      "<<<<>>>>",
      "< Error><Code>X</Code></Error>",
      "</Error>",
      "<!-- never closed",
      "<?xml version=\"1.0\"",
      "<![CDATA[x]]><Error><Code>X</Code></Error>",
      std::string("\0\xff\xfe<Error>", 10),
  };
  for (const std::string& input : inputs) {
    EXPECT_FALSE(parse_s3_error_xml(input)) << "input: " << input;
  }
}

TEST(parse_s3_error_xml, malformed_tags_inside_error_stop_the_walk) {
  EXPECT_FALSE(parse_s3_error_xml("<Error><Code>X</Code <Message>"));
  EXPECT_FALSE(parse_s3_error_xml("<Error><Code>X<</Code></Error>"));
  const auto after_code = parse_s3_error_xml("<Error><Code>X</Code><Message>m</Message <junk");
  ASSERT_TRUE(after_code);
  EXPECT_EQ(after_code->code, "X");
  EXPECT_EQ(after_code->message, "");
}

TEST(parse_s3_error_xml, every_truncation_is_safe_and_code_survives_once_complete) {
  const std::string& body = aws_precondition_failed;
  const std::size_t code_end = body.find("</Code>") + std::string("</Code>").size();
  const std::size_t message_end = body.find("</Message>") + std::string("</Message>").size();
  for (std::size_t length = 0; length <= body.size(); ++length) {
    const auto error = parse_s3_error_xml(std::string_view(body).substr(0, length));
    ASSERT_EQ(error.has_value(), length >= code_end) << "length " << length;
    if (error) {
      EXPECT_EQ(error->code, "PreconditionFailed");
      EXPECT_EQ(error->message.empty(), length < message_end) << "length " << length;
    }
  }
}

TEST(parse_s3_error_xml, size_limit_is_64_kib) {
  const std::string head = "<Error><Code>X</Code>";
  const std::string tail = "</Error>";
  std::string at_limit =
      head + std::string(max_s3_error_body_size - head.size() - tail.size(), ' ') + tail;
  ASSERT_EQ(at_limit.size(), 64u * 1024u);
  EXPECT_TRUE(parse_s3_error_xml(at_limit));

  const std::string over_limit = at_limit + " ";
  EXPECT_FALSE(parse_s3_error_xml(over_limit));
}

TEST(parse_s3_error_xml, deep_nesting_within_limit_is_fine) {
  std::string body = "<Error>";
  for (int i = 0; i < 5000; ++i) body += "<a>";
  for (int i = 0; i < 5000; ++i) body += "</a>";
  body += "<Code>Deep</Code></Error>";
  const auto error = parse_s3_error_xml(body);
  ASSERT_TRUE(error);
  EXPECT_EQ(error->code, "Deep");
}

TEST(parse_s3_error_xml, random_mutations_never_crash) {
  // Deterministic so a failure reproduces; the ASan/UBSan build is what makes this test bite.
  std::mt19937 random(20240901);
  const std::string seeds[] = {aws_precondition_failed, rgw_precondition_failed};
  const std::string alphabet = "<>/&;#x!?[]-\"'= \nErrorCodeMessage\xff";
  for (int round = 0; round < 20000; ++round) {
    std::string body = seeds[round % 2];
    const int edits = 1 + static_cast<int>(random() % 8);
    for (int e = 0; e < edits && !body.empty(); ++e) {
      const std::size_t at = random() % body.size();
      switch (random() % 3) {
        case 0:
          body[at] = alphabet[random() % alphabet.size()];
          break;
        case 1:
          body.erase(at, 1 + random() % 16);
          break;
        default:
          body.insert(at, 1, alphabet[random() % alphabet.size()]);
          break;
      }
    }
    const auto error = parse_s3_error_xml(body);
    if (error) {
      EXPECT_FALSE(error->code.empty());
    }
  }
}

TEST(normalize_etag, strips_quotes_weak_prefix_and_whitespace) {
  EXPECT_EQ(normalize_etag("\"d41d8cd98f00b204e9800998ecf8427e\""),
            "d41d8cd98f00b204e9800998ecf8427e");
  EXPECT_EQ(normalize_etag("W/\"abc\""), "abc");
  EXPECT_EQ(normalize_etag("  \"abc\"\r\n"), "abc");
  EXPECT_EQ(normalize_etag(" W/ \"abc\" "), "abc");
  EXPECT_EQ(normalize_etag("\" abc \""), "abc");
  EXPECT_EQ(normalize_etag("abc"), "abc");
  EXPECT_EQ(normalize_etag("\"9b2cf535f27731c974343645a3985328-2\""),
            "9b2cf535f27731c974343645a3985328-2");
}

TEST(normalize_etag, degenerate_inputs) {
  EXPECT_EQ(normalize_etag(""), "");
  EXPECT_EQ(normalize_etag("\"\""), "");
  EXPECT_EQ(normalize_etag("\""), "");
  EXPECT_EQ(normalize_etag("W/"), "");
  EXPECT_EQ(normalize_etag("\"abc"), "abc");
  EXPECT_EQ(normalize_etag("abc\""), "abc");
  EXPECT_EQ(normalize_etag("*"), "*");
}

TEST(normalize_etag, is_idempotent) {
  for (const char* etag : {"\"abc\"", "W/\"abc\"", "abc", ""}) {
    EXPECT_EQ(normalize_etag(normalize_etag(etag)), normalize_etag(etag));
  }
}

}  // namespace
}  // namespace s3lect::detail
