// The names a client certificate vouches for (docs/peer-mode.md#claims-that-cannot-be-forged): a
// CA-mode claim is the certificate's only for an id among its SAN DNS and URI names and its CN.
#include "certificate_names.hpp"

#include "support/test_certificates.hpp"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace s3lect::detail {
namespace {

using namespace test::certificate_detail;

std::vector<std::string> names_of(const char* common_name, const char* alternative_names) {
  const pkey_ptr ca_key = make_key();
  const x509_ptr ca =
      make_certificate(ca_key.get(), "names CA", nullptr, nullptr, true, nullptr, -1, 30);
  const pkey_ptr key = make_key();
  const x509_ptr leaf = make_certificate(key.get(), common_name, ca.get(), ca_key.get(), false,
                                         "clientAuth", -1, 30, alternative_names);
  return certificate_names(leaf.get());
}

TEST(CertificateNames, AlternativeDnsAndUriNamesThenTheCommonName) {
  const auto names = names_of("node-c", "DNS:node-d,URI:spiffe://example.org/node-u,IP:10.0.0.5");
  EXPECT_EQ(names, (std::vector<std::string>{"node-d", "spiffe://example.org/node-u", "node-c"}));
}

TEST(CertificateNames, AMonitorsCertificateNamesNoNode) {
  const auto names = names_of("monitor", "DNS:monitor.example");
  EXPECT_TRUE(certificate_names_id(names, "monitor"));
  EXPECT_FALSE(certificate_names_id(names, "node-g"));
  EXPECT_FALSE(certificate_names_id(names, "monitor.example.evil"));
  EXPECT_FALSE(certificate_names_id(names, ""));
}

TEST(CertificateNames, IdsMatchExactlyAndWildcardsNameNobody) {
  const auto names = names_of("node-a", "DNS:*.nodes.example,URI:spiffe://x/node-b");
  EXPECT_TRUE(certificate_names_id(names, "node-a"));
  EXPECT_FALSE(certificate_names_id(names, "NODE-A")) << "ids are case sensitive";
  EXPECT_TRUE(certificate_names_id(names, "spiffe://x/node-b"));
  EXPECT_FALSE(certificate_names_id(names, "node-b"));
  EXPECT_FALSE(certificate_names_id(names, "*.nodes.example"));
  EXPECT_FALSE(certificate_names_id(names, "a.nodes.example"));
}

}  // namespace
}  // namespace s3lect::detail
