// Unit tests for src/sigv4.{hpp,cpp}.
//
// Test vector sources (facts copied as data; no code copied):
// * AWS SigV4 test suite as shipped in github.com/awslabs/aws-c-auth, commit
//   495329c2433034bd8fd53fc6ba9e0202d3fac876, tests/aws-signing-test-suite/v4/<name>/
//   {request.txt, context.json, header-canonical-request.txt, header-string-to-sign.txt,
//   header-signature.txt, header-signed-request.txt}. Service "service", region us-east-1,
//   AKIDEXAMPLE / wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY, 20150830T123600Z. In that copy the
//   signer adds X-Amz-Date (and X-Amz-Content-Sha256 when "sign_body" is set); here the test adds
//   them to the request, as our S3 client will. Left out: the "-normalized" vectors (path
//   normalisation S3 does not do), and get-vanilla-query, identical to get-vanilla in that copy.
//   The "-unnormalized" ones are kept: they prove "//", "/./" and "/.." survive, as S3 needs.
// * Amazon S3 API Reference, "Signature Calculations for the Authorization Header: Transferring
//   Payload in a Single Chunk (AWS Signature Version 4)", section "Examples: Signature
//   Calculations": https://docs.aws.amazon.com/AmazonS3/latest/API/sig-v4-header-based-auth.html
//   (GET Object with Range, PUT Object, GET Bucket lifecycle, GET Bucket list objects).
// * SHA-256 of "abc": FIPS 180-2 appendix B.1. HMAC-SHA256: RFC 4231 section 4.3 (test case 2).
#include "sigv4.hpp"

#include <gtest/gtest.h>

#include <chrono>
#include <ostream>
#include <string>
#include <vector>

namespace s3lect::detail {
namespace {

using header_list = std::vector<std::pair<std::string, std::string>>;

constexpr const char* empty_sha256 =
    "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855";

// ---------------------------------------------------------------------------------------------
// AWS SigV4 test suite (aws-c-auth copy)
// ---------------------------------------------------------------------------------------------

const sigv4_key suite_key{"AKIDEXAMPLE", "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY"};
const sigv4_scope suite_scope{"20150830T123600Z", "us-east-1", "service"};

// Session token of post-sts-header-before (context.json), split only to keep lines short.
const std::string suite_sts_token =
    "AQoDYXdzEPT//////////wEXAMPLEtc764bNrC9SAPBSM22wDOk4x4HIZ8j4FZTwdQWLWsKWHGBuFqwAeMicRXmxf"
    "pSPfIeoIYRqTflfKD8YUuwthAx7mSEI/qkPpKPi/kMcGdQrmGdeehM4IC1NtBmUpp2wUE8phUZampKsburEDy0KP"
    "kyQDYwT7WZ0wq5VSXDvp75YU9HFvlRd8Tx6q6fE8YQcHNVXAkiY9q6d+xo0rKwT38xVqr7ZD0u0iPPkUL64lIZbq"
    "BAz+scqKmlzm8FDrypNC9Yjc8fPOLn9FX9KSYvKTr4rvx3iSIlTJabIQwj2ICCR/oLxBA==";

const std::string form_body_sha256 =
    "9095672bbd1f56dfc5b65f3e153adc8731a4a654192329106275f4c7b24d0b6e";

struct suite_vector {
  std::string name;
  sigv4_request request;
  std::string canonical_request;
  std::string canonical_request_hash;  // last line of header-string-to-sign.txt
  std::string signature;
};

/// Lets GoogleTest name a failing vector instead of dumping its bytes.
void PrintTo(const suite_vector& v, std::ostream* out) {
  *out << v.name;
}

/// A suite request: the request.txt headers plus the X-Amz-Date the suite's signer adds.
sigv4_request suite_request(std::string method, std::string path, header_list query,
                            header_list extra_headers = {},
                            std::string payload_hash = empty_sha256) {
  header_list headers{{"Host", "example.amazonaws.com"}};
  headers.insert(headers.end(), extra_headers.begin(), extra_headers.end());
  headers.emplace_back("X-Amz-Date", "20150830T123600Z");
  return {std::move(method), std::move(path), std::move(query), std::move(headers),
          std::move(payload_hash)};
}

/// The canonical request of the simplest GET/POST "/" vectors, with `query` and extra header lines.
std::string plain_canonical(std::string method, std::string path, std::string query,
                            std::string extra_header_lines = "", std::string extra_signed = "") {
  return method + "\n" + path + "\n" + query + "\n" + "host:example.amazonaws.com\n" +
         extra_header_lines + "x-amz-date:20150830T123600Z\n\nhost;" + extra_signed +
         "x-amz-date\n" + empty_sha256;
}

/// The suite vectors this file checks, with requests as our S3 client would build them.
std::vector<suite_vector> suite_vectors() {
  const std::string unreserved =
      "-._~0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";
  const std::string u1234 = "\xE1\x88\xB4";  // U+1234 ETHIOPIC SYLLABLE SEE, 3 UTF-8 bytes
  std::vector<suite_vector> v;

  v.push_back({"get-vanilla", suite_request("GET", "/", {}), plain_canonical("GET", "/", ""),
               "bb579772317eb040ac9ed261061d46c1f17a8133879d6129b6e1c25292927e63",
               "5fa00fa31553b73ebf1942676e86291e8372ff2a2260956d9b8aae1d763fbf31"});
  v.push_back({"get-vanilla-empty-query-key", suite_request("GET", "/", {{"Param1", "value1"}}),
               plain_canonical("GET", "/", "Param1=value1"),
               "1e24db194ed7d0eec2de28d7369675a243488e08526e8c1c73571282f7c517ab",
               "a67d582fa61cc504c4bae71f336f98b97f1ea3c7a6bfe1b6e45aec72011b9aeb"});
  v.push_back({"get-vanilla-query-order-key-case",
               suite_request("GET", "/", {{"Param2", "value2"}, {"Param1", "value1"}}),
               plain_canonical("GET", "/", "Param1=value1&Param2=value2"),
               "816cd5b414d056048ba4f7c5386d6e0533120fb1fcfa93762cf0fc39e2cf19e0",
               "b97d918cfa904a5beff61c982a1b6f458b799221646efd99d3219ec94cdf2500"});
  v.push_back(
      {"get-vanilla-query-order-encoded",
       suite_request("GET", "/", {{"Param-3", "Value3"}, {"Param", "Value2"}, {u1234, "Value1"}}),
       plain_canonical("GET", "/", "%E1%88%B4=Value1&Param=Value2&Param-3=Value3"),
       "868294f5c38bd141c4972a373a76654f1418a8e4fc18b2e7903ae45e8ae0ec71",
       "371d3713e185cc334048618a97f809c9ffe339c62934c032af5a0e595648fcac"});
  v.push_back({"get-vanilla-query-unreserved",
               suite_request("GET", "/", {{unreserved, unreserved}}),
               plain_canonical("GET", "/", unreserved + "=" + unreserved),
               "c30d4703d9f799439be92736156d47ccfb2d879ddf56f5befa6d1d6aab979177",
               "9c3e54bfcdf0b19771a7f523ee5669cdf59bc7cc0884027167c21bb143a40197"});
  v.push_back({"get-vanilla-utf8-query", suite_request("GET", "/", {{u1234, "bar"}}),
               plain_canonical("GET", "/", "%E1%88%B4=bar"),
               "eb30c5bed55734080471a834cc727ae56beb50e5f39d1bff6d0d38cb192a7073",
               "2cdec8eed098649ff3a119c94853b13c643bcf08f8b0a1d91e12c9027818dd04"});
  v.push_back(
      {"get-vanilla-with-session-token",
       suite_request("GET", "/", {},
                     {{"X-Amz-Security-Token",
                       "6e86291e8372ff2a2260956d9b8aae1d763fbf315fa00fa31553b73ebf194267"}}),
       "GET\n/\n\nhost:example.amazonaws.com\nx-amz-date:20150830T123600Z\n"
       "x-amz-security-token:"
       "6e86291e8372ff2a2260956d9b8aae1d763fbf315fa00fa31553b73ebf194267\n\n"
       "host;x-amz-date;x-amz-security-token\n" +
           std::string(empty_sha256),
       "067b36aa60031588cea4a4cde1f21215227a047690c72247f1d70b32fbbfad2b",
       "07ec1639c89043aa0e3e2de82b96708f198cceab042d4a97044c66dd9f74e7f8"});
  v.push_back({"get-header-key-duplicate",
               suite_request(
                   "GET", "/", {},
                   {{"My-Header1", "value2"}, {"My-Header1", "value2"}, {"My-Header1", "value1"}}),
               plain_canonical("GET", "/", "", "my-header1:value2,value2,value1\n", "my-header1;"),
               "dc7f04a3abfde8d472b0ab1a418b741b7c67174dad1551b4117b15527fbe966c",
               "c9d5ea9f3f72853aea855b47ea873832890dbdd183b4468f858259531a5138ea"});
  v.push_back(
      {"get-header-value-order",
       suite_request("GET", "/", {},
                     {{"My-Header1", "value4"},
                      {"My-Header1", "value1"},
                      {"My-Header1", "value3"},
                      {"My-Header1", "value2"}}),
       plain_canonical("GET", "/", "", "my-header1:value4,value1,value3,value2\n", "my-header1;"),
       "31ce73cd3f3d9f66977ad3dd957dc47af14df92fcd8509f59b349e9137c58b86",
       "08c7e5a9acfcfeb3ab6b2185e75ce8b1deb5e634ec47601a50643f830c755c01"});
  v.push_back(
      {"get-header-value-trim",
       suite_request("GET", "/", {}, {{"My-Header1", " value1"}, {"My-Header2", " \"a   b   c\""}}),
       plain_canonical("GET", "/", "", "my-header1:value1\nmy-header2:\"a b c\"\n",
                       "my-header1;my-header2;"),
       "a726db9b0df21c14f559d0a978e563112acb1b9e05476f0a6a1c7d68f28605c7",
       "acc3ed3afb60bb290fc8d2dd0098b9911fcaa05412b367055dee359757a9c736"});
  v.push_back({"get-header-value-multiline",
               suite_request("GET", "/", {}, {{"My-Header1", "value1\n  value2\n     value3"}}),
               plain_canonical("GET", "/", "", "my-header1:value1 value2 value3\n", "my-header1;"),
               "e99419459a677bc11de234014be3c4e72c1ea5b454ceb58b613061f5d7a162e8",
               "cfd34249e4b1c8d6b91ef74165d41a32e5fab3306300901bb65a51a73575eefd"});
  v.push_back({"get-utf8", suite_request("GET", s3_object_path("", u1234), {}),
               plain_canonical("GET", "/%E1%88%B4", ""),
               "2a0a97d02205e45ce2e994789806b19270cfbbb0921b278ccf58f5249ac42102",
               "8318018e0b0f223aa2bbf98705b62bb787dc9c0e678f255a891fd03141be5d85"});
  v.push_back({"get-space-unnormalized",
               suite_request("GET", s3_object_path("", "example space/"), {}),
               plain_canonical("GET", "/example%20space/", ""),
               "63ee75631ed7234ae61b5f736dfc7754cdccfedbff4b5128a915706ee9390d86",
               "652487583200325589f1fba4c7e578f72c47cb61beeca81406b39ddec1366741"});
  v.push_back({"get-unreserved", suite_request("GET", s3_object_path("", unreserved), {}),
               plain_canonical("GET", "/" + unreserved, ""),
               "6a968768eefaa713e2a6b16b589a8ea192661f098f37349f4e2c0082757446f9",
               "07ef7494c76fa4850883e2b006601f940f8a34d404d0cfa977f52a65bbf5f24f"});
  v.push_back({"get-slash-unnormalized", suite_request("GET", s3_object_path("", "/"), {}),
               plain_canonical("GET", "//", ""),
               "80cb39203d058af815de2b79250ff56e1b73eb9b4718c86556cdc6f150c5d209",
               "c88bcd3d312d75078c0cd961d6deae3f4c754924b01669efcfcb439fd5e5b76e"});
  v.push_back({"get-slashes-unnormalized",
               suite_request("GET", s3_object_path("", "/example//"), {}),
               plain_canonical("GET", "//example//", ""),
               "528ec3105ee1f34ab014bb0a1a45da0ed2742a4fea3555149e5b4d5d201eb240",
               "87cca117541a147f6df867677d98a7d80dff226d2bfca9e4ffa899665623c7e5"});
  v.push_back({"get-slash-dot-slash-unnormalized",
               suite_request("GET", s3_object_path("", "./"), {}),
               plain_canonical("GET", "/./", ""),
               "d67825e2268bd77a97c7688b8d72c31a3c1855b309808505ba0a9747d2465aa7",
               "68714168e6557f8f2de0ef956fc24dc2593a4bd2961f8df51898d8a134695145"});
  v.push_back({"get-slash-pointless-dot-unnormalized",
               suite_request("GET", s3_object_path("", "./example"), {}),
               plain_canonical("GET", "/./example", ""),
               "73895e0e829507e28e39fd24669aedc2434a8e179e547e3c075b42921f952cdb",
               "beb03f223f7deae4146464f06e29eebbee9c8afbe15c290cf07aa8b119e14cff"});
  v.push_back({"get-relative-unnormalized",
               suite_request("GET", s3_object_path("", "example/.."), {}),
               plain_canonical("GET", "/example/..", ""),
               "0511f456aa502b456d135fcb9d749374a55228f9dbeedda1eacf659e05b0615b",
               "eca7ead57bb5aa5c8e28007acd4ff04e1ff9a0ff3b237ec1554a184887ff9282"});
  v.push_back({"get-relative-relative-unnormalized",
               suite_request("GET", s3_object_path("", "example1/example2/../.."), {}),
               plain_canonical("GET", "/example1/example2/../..", ""),
               "76115030c0f3ff06c20fdff5ceb6d5e0b835a1743e00b94fea7c7f381269437b",
               "dc33e0856fd4baca4d7aa2146c38958283844764f38c74252a333df5e613003b"});
  v.push_back({"post-vanilla", suite_request("POST", "/", {}), plain_canonical("POST", "/", ""),
               "553f88c9e4d10fc9e109e2aeb65f030801b70c2f6468faca261d401ae622fc87",
               "5da7c1a2acd57cee7505fc6676e4e544621c30862966e37dddb68e92efbe5d6b"});
  v.push_back({"post-vanilla-query", suite_request("POST", "/", {{"Param1", "value1"}}),
               plain_canonical("POST", "/", "Param1=value1"),
               "9d659678c1756bb3113e2ce898845a0a79dbbc57b740555917687f1b3340fbbd",
               "28038455d6de14eafc1f9222cf5aa6f1a96197d7deb8263271d420d138af7f11"});
  v.push_back({"post-header-key-case", suite_request("POST", "/", {}),
               plain_canonical("POST", "/", ""),
               "553f88c9e4d10fc9e109e2aeb65f030801b70c2f6468faca261d401ae622fc87",
               "5da7c1a2acd57cee7505fc6676e4e544621c30862966e37dddb68e92efbe5d6b"});
  v.push_back({"post-header-key-sort", suite_request("POST", "/", {}, {{"My-Header1", "value1"}}),
               plain_canonical("POST", "/", "", "my-header1:value1\n", "my-header1;"),
               "9368318c2967cf6de74404b30c65a91e8f6253e0a8659d6d5319f1a812f87d65",
               "c5410059b04c1ee005303aed430f6e6645f61f4dc9e1461ec8f8916fdf18852c"});
  v.push_back({"post-header-value-case", suite_request("POST", "/", {}, {{"My-Header1", "VALUE1"}}),
               plain_canonical("POST", "/", "", "my-header1:VALUE1\n", "my-header1;"),
               "d51ced243e649e3de6ef63afbbdcbca03131a21a7103a1583706a64618606a93",
               "cdbc9802e29d2942e5e10b5bccfdd67c5f22c7c4e8ae67b53629efa58b974b7d"});
  v.push_back({"post-sts-header-before",
               suite_request("POST", "/", {}, {{"X-Amz-Security-Token", suite_sts_token}}),
               "POST\n/\n\nhost:example.amazonaws.com\nx-amz-date:20150830T123600Z\n"
               "x-amz-security-token:" +
                   suite_sts_token + "\n\nhost;x-amz-date;x-amz-security-token\n" + empty_sha256,
               "c237e1b440d4c63c32ca95b5b99481081cb7b13c7e40434868e71567c1a882f6",
               "85d96828115b5dc0cfc3bd16ad9e210dd772bbebba041836c64533a82be05ead"});
  v.push_back({"post-x-www-form-urlencoded",
               suite_request("POST", "/", {},
                             {{"Content-Type", "application/x-www-form-urlencoded"},
                              {"Content-Length", "13"},
                              {"x-amz-content-sha256", form_body_sha256}},
                             form_body_sha256),
               "POST\n/\n\ncontent-length:13\ncontent-type:application/x-www-form-urlencoded\n"
               "host:example.amazonaws.com\nx-amz-content-sha256:" +
                   form_body_sha256 +
                   "\nx-amz-date:20150830T123600Z\n\n"
                   "content-length;content-type;host;x-amz-content-sha256;x-amz-date\n" +
                   form_body_sha256,
               "b1edd1d03544c25390e32085d55b57acc9a3961bb59415ff86c45c3d89d16cfb",
               "d3875051da38690788ef43de4db0d8f280229d82040bfac253562e56c3f20e0b"});
  v.push_back({"post-x-www-form-urlencoded-parameters",
               suite_request("POST", "/", {},
                             {{"Content-Type", "application/x-www-form-urlencoded; charset=utf-8"},
                              {"Content-Length", "13"},
                              {"x-amz-content-sha256", form_body_sha256}},
                             form_body_sha256),
               "POST\n/\n\ncontent-length:13\n"
               "content-type:application/x-www-form-urlencoded; charset=utf-8\n"
               "host:example.amazonaws.com\nx-amz-content-sha256:" +
                   form_body_sha256 +
                   "\nx-amz-date:20150830T123600Z\n\n"
                   "content-length;content-type;host;x-amz-content-sha256;x-amz-date\n" +
                   form_body_sha256,
               "a89f1a5b53e37702ee6363ce1da3ce8f54386f3c8f352ae652153c2982a0bc4d",
               "328d1b9eaadca9f5818ef05e8392801e091653bafec24fcab71e7344e7f51422"});
  return v;
}

/// The SignedHeaders line of a canonical request (its second-to-last line).
std::string signed_headers_of(const std::string& canonical) {
  const auto last = canonical.rfind('\n');
  const auto before = canonical.rfind('\n', last - 1);
  return canonical.substr(before + 1, last - before - 1);
}

/// One instance per suite vector.
class aws_sigv4_suite : public ::testing::TestWithParam<suite_vector> {};

TEST_P(aws_sigv4_suite, canonical_request_string_to_sign_signature_and_header) {
  const suite_vector& v = GetParam();
  const std::string canonical = canonical_request(v.request);
  EXPECT_EQ(canonical, v.canonical_request);

  const std::string to_sign = string_to_sign(suite_scope, canonical);
  EXPECT_EQ(to_sign,
            "AWS4-HMAC-SHA256\n20150830T123600Z\n20150830/us-east-1/service/aws4_request\n" +
                v.canonical_request_hash);

  EXPECT_EQ(signature(suite_key, suite_scope, to_sign), v.signature);

  // Same layout as the suite's header-signed-request.txt.
  EXPECT_EQ(authorization_header(suite_key, suite_scope, v.request),
            "AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/20150830/us-east-1/service/aws4_request, "
            "SignedHeaders=" +
                signed_headers_of(v.canonical_request) + ", Signature=" + v.signature);
}

INSTANTIATE_TEST_SUITE_P(aws_c_auth_v4, aws_sigv4_suite, ::testing::ValuesIn(suite_vectors()),
                         [](const ::testing::TestParamInfo<suite_vector>& info) {
                           std::string name = info.param.name;
                           for (char& c : name) {
                             if (c == '-') c = '_';
                           }
                           return name;
                         });

TEST(aws_sigv4_suite_data, form_body_hash_matches_the_suite) {
  EXPECT_EQ(sha256_hex("Param1=value1"), form_body_sha256);
}

// ---------------------------------------------------------------------------------------------
// Amazon S3 API reference examples (examplebucket, AKIAIOSFODNN7EXAMPLE)
// ---------------------------------------------------------------------------------------------

const sigv4_key s3_doc_key{"AKIAIOSFODNN7EXAMPLE", "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"};
const sigv4_scope s3_doc_scope{"20130524T000000Z", "us-east-1", "s3"};

/// Checks one S3 documentation example end to end.
void expect_s3_example(const sigv4_request& request, const std::string& expected_canonical,
                       const std::string& expected_hash, const std::string& expected_signature) {
  const std::string canonical = canonical_request(request);
  EXPECT_EQ(canonical, expected_canonical);
  const std::string to_sign = string_to_sign(s3_doc_scope, canonical);
  EXPECT_EQ(to_sign, "AWS4-HMAC-SHA256\n20130524T000000Z\n20130524/us-east-1/s3/aws4_request\n" +
                         expected_hash);
  EXPECT_EQ(signature(s3_doc_key, s3_doc_scope, to_sign), expected_signature);
  // The page writes "...aws4_request,SignedHeaders=...,Signature=..." without spaces; we use
  // ", " like the SigV4 suite and botocore. AWS and Ceph RGW accept both.
  EXPECT_EQ(authorization_header(s3_doc_key, s3_doc_scope, request),
            "AWS4-HMAC-SHA256 Credential=AKIAIOSFODNN7EXAMPLE/20130524/us-east-1/s3/aws4_request, "
            "SignedHeaders=" +
                signed_headers_of(expected_canonical) + ", Signature=" + expected_signature);
}

TEST(s3_doc_examples, get_object_with_range) {
  const sigv4_request request{"GET",
                              s3_object_path("", "test.txt"),
                              {},
                              {{"Host", "examplebucket.s3.amazonaws.com"},
                               {"Range", "bytes=0-9"},
                               {"x-amz-content-sha256", empty_sha256},
                               {"x-amz-date", "20130524T000000Z"}},
                              empty_sha256};
  expect_s3_example(request,
                    "GET\n/test.txt\n\nhost:examplebucket.s3.amazonaws.com\nrange:bytes=0-9\n"
                    "x-amz-content-sha256:" +
                        std::string(empty_sha256) +
                        "\nx-amz-date:20130524T000000Z\n\n"
                        "host;range;x-amz-content-sha256;x-amz-date\n" +
                        empty_sha256,
                    "7344ae5b7ee6c3e7e6b0fe0640412a37625d1fbfff95c48bbb2dc43964946972",
                    "f0e8bdb87c964420e857bd35b5d6ed310bd44f0170aba48dd91039c6036bdb41");
}

TEST(s3_doc_examples, put_object) {
  const std::string body_hash = sha256_hex("Welcome to Amazon S3.");
  ASSERT_EQ(body_hash, "44ce7dd67c959e0d3524ffac1771dfbba87d2b6b4b4e99e42034a8b803f8b072");
  const sigv4_request request{"PUT",
                              s3_object_path("", "test$file.text"),
                              {},
                              {{"Host", "examplebucket.s3.amazonaws.com"},
                               {"Date", "Fri, 24 May 2013 00:00:00 GMT"},
                               {"x-amz-date", "20130524T000000Z"},
                               {"x-amz-storage-class", "REDUCED_REDUNDANCY"},
                               {"x-amz-content-sha256", body_hash}},
                              body_hash};
  expect_s3_example(request,
                    "PUT\n/test%24file.text\n\ndate:Fri, 24 May 2013 00:00:00 GMT\n"
                    "host:examplebucket.s3.amazonaws.com\nx-amz-content-sha256:" +
                        body_hash +
                        "\nx-amz-date:20130524T000000Z\nx-amz-storage-class:REDUCED_REDUNDANCY\n\n"
                        "date;host;x-amz-content-sha256;x-amz-date;x-amz-storage-class\n" +
                        body_hash,
                    "9e0e90d9c76de8fa5b200d8c849cd5b8dc7a3be3951ddb7f6a76b4158342019d",
                    "98ad721746da40c64f1a55b78f14c238d841ea1380cd77a1b5971af0ece108bd");
}

/// Canonical request of the two bucket-level GET examples, which differ only in the query.
std::string s3_bucket_get_canonical(const std::string& query) {
  return "GET\n/\n" + query +
         "\nhost:examplebucket.s3.amazonaws.com\nx-amz-content-sha256:" + empty_sha256 +
         "\nx-amz-date:20130524T000000Z\n\nhost;x-amz-content-sha256;x-amz-date\n" + empty_sha256;
}

/// A bucket-level GET of the examples with the given (unencoded, unsorted) query.
sigv4_request s3_bucket_get(header_list query) {
  return {"GET",
          "/",
          std::move(query),
          {{"Host", "examplebucket.s3.amazonaws.com"},
           {"x-amz-date", "20130524T000000Z"},
           {"x-amz-content-sha256", empty_sha256}},
          empty_sha256};
}

TEST(s3_doc_examples, get_bucket_lifecycle) {
  expect_s3_example(s3_bucket_get({{"lifecycle", ""}}), s3_bucket_get_canonical("lifecycle="),
                    "9766c798316ff2757b517bc739a67f6213b4ab36dd5da2f94eaebf79c77395ca",
                    "fea454ca298b7da1c68078a5d1bdbfbbe0d65c699e0f91ac7a200a0136783543");
}

TEST(s3_doc_examples, list_objects) {
  expect_s3_example(s3_bucket_get({{"prefix", "J"}, {"max-keys", "2"}}),
                    s3_bucket_get_canonical("max-keys=2&prefix=J"),
                    "df57d21db20da04d7fa30298dd4488ba3a2b47ca3a489c74750e0f1e7df1b9b7",
                    "34b48302e7b5fa45bde8084f4b7868a86f0a534bc59db6670ed5711ef69dc6f7");
}

// ---------------------------------------------------------------------------------------------
// Hashing and encoding building blocks
// ---------------------------------------------------------------------------------------------

TEST(sha256_hex, known_digests) {
  EXPECT_EQ(sha256_hex(""), empty_sha256);
  EXPECT_EQ(sha256_hex(std::string_view()), empty_sha256);
  EXPECT_EQ(sha256_hex("abc"), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
}

TEST(hmac_sha256, rfc4231_test_case_2) {
  const std::string mac = hmac_sha256("Jefe", "what do ya want for nothing?");
  EXPECT_EQ(mac.size(), 32u);
  EXPECT_EQ(to_hex(mac), "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843");
}

TEST(hmac_sha256, empty_key_and_data_work) {
  EXPECT_EQ(hmac_sha256("", "").size(), 32u);
  EXPECT_EQ(hmac_sha256(std::string_view(), std::string_view()), hmac_sha256("", ""));
}

TEST(to_hex, lower_case_two_digits_per_byte) {
  EXPECT_EQ(to_hex(std::string_view("\x00\xff\x10\xAB", 4)), "00ff10ab");
  EXPECT_EQ(to_hex(""), "");
}

TEST(uri_encode, keeps_only_unreserved) {
  EXPECT_EQ(uri_encode("AZaz09-_.~", false), "AZaz09-_.~");
  EXPECT_EQ(uri_encode("a b", false), "a%20b");
  EXPECT_EQ(uri_encode("a+b=c&d", false), "a%2Bb%3Dc%26d");
  EXPECT_EQ(uri_encode("100%", false), "100%25");
  EXPECT_EQ(uri_encode("!*'();:@$,?#[]", false), "%21%2A%27%28%29%3B%3A%40%24%2C%3F%23%5B%5D");
  EXPECT_EQ(uri_encode(std::string_view("\0\x7f", 2), false), "%00%7F");
  EXPECT_EQ(uri_encode("", true), "");
}

TEST(uri_encode, slash_only_when_asked) {
  EXPECT_EQ(uri_encode("a/b", true), "a/b");
  EXPECT_EQ(uri_encode("a/b", false), "a%2Fb");
}

TEST(uri_encode, utf8_bytes_upper_case_hex) {
  EXPECT_EQ(uri_encode("ключ", false), "%D0%BA%D0%BB%D1%8E%D1%87");
  EXPECT_EQ(uri_encode("データ", false), "%E3%83%87%E3%83%BC%E3%82%BF");
  EXPECT_EQ(uri_encode("\xF0\x9F\x98\x80", false), "%F0%9F%98%80");  // U+1F600
}

TEST(s3_object_path, path_style_and_virtual_hosted) {
  EXPECT_EQ(s3_object_path("bucket", "leader"), "/bucket/leader");
  EXPECT_EQ(s3_object_path("", "leader"), "/leader");
  EXPECT_EQ(s3_object_path("my.bucket-1", "a"), "/my.bucket-1/a");
}

TEST(s3_object_path, awkward_keys) {
  EXPECT_EQ(s3_object_path("bucket", "ключ/データ"),
            "/bucket/%D0%BA%D0%BB%D1%8E%D1%87/%E3%83%87%E3%83%BC%E3%82%BF");
  EXPECT_EQ(s3_object_path("", "my key"), "/my%20key");
  EXPECT_EQ(s3_object_path("b", "a b+c=d&e~f"), "/b/a%20b%2Bc%3Dd%26e~f");
  EXPECT_EQ(s3_object_path("b", "elections/team a/leader.json"),
            "/b/elections/team%20a/leader.json");
  EXPECT_EQ(s3_object_path("b", "50%off?x#y"), "/b/50%25off%3Fx%23y");
}

TEST(s3_object_path, no_normalisation_of_slashes_and_dots) {
  EXPECT_EQ(s3_object_path("b", "a//b/"), "/b/a//b/");
  EXPECT_EQ(s3_object_path("b", "/leading"), "/b//leading");
  EXPECT_EQ(s3_object_path("b", "x/../y/./z"), "/b/x/../y/./z");
}

TEST(s3_object_path, empty_key_is_the_bucket_root) {
  EXPECT_EQ(s3_object_path("b", ""), "/b/");
  EXPECT_EQ(s3_object_path("", ""), "/");
}

// ---------------------------------------------------------------------------------------------
// Canonicalisation details the vectors above do not pin down
// ---------------------------------------------------------------------------------------------

/// The canonical query line (third line) of `request`.
std::string query_line(const sigv4_request& request) {
  const std::string canonical = canonical_request(request);
  const auto first = canonical.find('\n');
  const auto second = canonical.find('\n', first + 1);
  const auto third = canonical.find('\n', second + 1);
  return canonical.substr(second + 1, third - second - 1);
}

TEST(canonical_query, encodes_before_sorting_and_sorts_values_of_equal_names) {
  sigv4_request request{"GET", "/", {}, {{"host", "h"}}, empty_sha256};
  request.query = {{"b", "2"}, {"a", "z"}, {"a", "y"}, {"A", "x"}};
  EXPECT_EQ(query_line(request), "A=x&a=y&a=z&b=2");
}

TEST(canonical_query, encodes_reserved_characters_including_slash_and_space) {
  sigv4_request request{"GET", "/", {}, {{"host", "h"}}, empty_sha256};
  request.query = {{"prefix", "a/b c+d"}, {"list-type", "2"}, {"continuation-token", "x=="}};
  EXPECT_EQ(query_line(request), "continuation-token=x%3D%3D&list-type=2&prefix=a%2Fb%20c%2Bd");
}

TEST(canonical_request, empty_uri_means_root) {
  const sigv4_request request{"GET", "", {}, {{"Host", "h"}}, "UNSIGNED-PAYLOAD"};
  EXPECT_EQ(canonical_request(request), "GET\n/\n\nhost:h\n\nhost\nUNSIGNED-PAYLOAD");
}

TEST(canonical_request, header_names_lowered_values_trimmed_tabs_collapsed) {
  const sigv4_request request{
      "PUT", "/b/k", {}, {{"HOST", "h"}, {"If-None-Match", "\t* \t"}, {"X-Empty", "   "}}, "p"};
  EXPECT_EQ(canonical_request(request),
            "PUT\n/b/k\n\nhost:h\nif-none-match:*\nx-empty:\n\nhost;if-none-match;x-empty\np");
}

TEST(authorization_header, conditional_headers_and_session_token_are_signed) {
  const sigv4_key key{"AKID", "secret"};
  const sigv4_scope scope{"20240901T000000Z", "eu-west-1", "s3"};
  sigv4_request request{"PUT",
                        s3_object_path("locks", "leader"),
                        {},
                        {{"Host", "s3.eu-west-1.amazonaws.com"},
                         {"x-amz-date", scope.amz_date},
                         {"x-amz-content-sha256", empty_sha256},
                         {"x-amz-security-token", "token"},
                         {"If-Match", "abc123"}},
                        empty_sha256};
  const std::string header = authorization_header(key, scope, request);
  EXPECT_TRUE(header.starts_with(
      "AWS4-HMAC-SHA256 Credential=AKID/20240901/eu-west-1/s3/aws4_request, "
      "SignedHeaders=host;if-match;x-amz-content-sha256;x-amz-date;x-amz-security-token, "
      "Signature="))
      << header;

  // A different precondition must not verify under the old signature.
  request.headers.back().second = "abc124";
  EXPECT_NE(authorization_header(key, scope, request), header);
}

TEST(format_amz_date, iso8601_basic_utc) {
  using namespace std::chrono;
  const sys_days day = 2015y / August / 30;
  EXPECT_EQ(format_amz_date(day + 12h + 36min), "20150830T123600Z");
  EXPECT_EQ(format_amz_date(sys_days{2013y / May / 24}), "20130524T000000Z");
  EXPECT_EQ(format_amz_date(system_clock::time_point{}), "19700101T000000Z");
}

TEST(format_amz_date, truncates_fractions_of_a_second) {
  using namespace std::chrono;
  const sys_days day = 2024y / December / 31;
  EXPECT_EQ(format_amz_date(day + 23h + 59min + 59s + 999ms), "20241231T235959Z");
}

}  // namespace
}  // namespace s3lect::detail
