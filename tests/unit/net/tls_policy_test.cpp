// The TLS policy every endpoint shares (tls_context.cpp): a health server refuses clients that
// offer only CBC suites or TLS 1.1, picks the suite by its own order, and our clients offer no
// CBC suite. Blocking OpenSSL clients against a real health_server on 127.0.0.1.
#include <s3lect/health.hpp>

#include "support/background_io.hpp"
#include "support/fake_leadership_source.hpp"
#include "support/test_certificates.hpp"
#include "tls_context.hpp"

#include <gtest/gtest.h>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/ssl.hpp>

#include <openssl/ssl.h>

#include <chrono>
#include <future>
#include <memory>
#include <string>

namespace s3lect {
namespace {

namespace ssl = boost::asio::ssl;
using tcp = boost::asio::ip::tcp;
using boost::system::error_code;
using namespace std::chrono_literals;

const test::test_pki& pki() {
  static const test::test_pki instance = test::make_test_pki("s3lect TLS policy CA");
  return instance;
}

/// What one handshake against the server negotiated.
struct negotiated {
  error_code error;
  std::string cipher;
};

class TlsPolicy : public ::testing::Test {
 protected:
  void SetUp() override {
    source.set_leader(1, R"({"leaderID":"a","lastUpdated":"2026-11-21T10:30:45.123Z"})", 10s);
    health_server_config config;
    config.bind_address = "127.0.0.1:0";
    config.tls.certificate_pem = pki().server.certificate;
    config.tls.private_key_pem = pki().server.private_key;
    server = std::make_unique<health_server>(background.io.get_executor(), source, config);
    ASSERT_FALSE(server->start());
    endpoint = server->local_endpoint();
  }

  void TearDown() override {
    // Destroyed on its own thread: the server's state belongs to the io_context's thread.
    std::promise<void> destroyed;
    boost::asio::post(background.io, [this, &destroyed] {
      server.reset();
      destroyed.set_value();
    });
    destroyed.get_future().wait();
  }

  /// A blocking client handshake offering TLS up to `max_version` and, in TLS 1.2, `ciphers`.
  negotiated handshake(int max_version, const char* ciphers) {
    ssl::context context(ssl::context::tls_client);
    SSL_CTX_set_max_proto_version(context.native_handle(), max_version);
    EXPECT_EQ(SSL_CTX_set_cipher_list(context.native_handle(), ciphers), 1);
    context.set_verify_mode(ssl::verify_none);
    boost::asio::io_context io;
    ssl::stream<tcp::socket> stream(io, context);
    stream.next_layer().connect(endpoint);
    negotiated out;
    stream.handshake(ssl::stream_base::client, out.error);
    if (!out.error) out.cipher = SSL_get_cipher_name(stream.native_handle());
    return out;
  }

  test::background_io background;
  test::fake_leadership_source source{background.io.get_executor()};
  std::unique_ptr<health_server> server;
  tcp::endpoint endpoint;
};

TEST_F(TlsPolicy, ClientOfferingOnlyCbcSuitesIsRefused) {
  EXPECT_TRUE(handshake(TLS1_2_VERSION, "ECDHE-ECDSA-AES128-SHA").error);
  EXPECT_TRUE(handshake(TLS1_2_VERSION, "ECDHE-ECDSA-AES256-SHA384").error);
}

TEST_F(TlsPolicy, ClientOfferingTls11IsRefused) {
  EXPECT_TRUE(handshake(TLS1_1_VERSION, "ALL:@SECLEVEL=0").error);
}

TEST_F(TlsPolicy, Tls12WithEcdheAndAeadIsAccepted) {
  const negotiated outcome = handshake(TLS1_2_VERSION, "ECDHE-ECDSA-AES128-GCM-SHA256");
  EXPECT_FALSE(outcome.error) << outcome.error.message();
  EXPECT_EQ(outcome.cipher, "ECDHE-ECDSA-AES128-GCM-SHA256");
}

TEST_F(TlsPolicy, ServerPicksBySuiteItsOwnOrder) {
  // The client prefers ChaCha20 and offers a CBC suite first; the server's first choice wins.
  const negotiated outcome = handshake(
      TLS1_2_VERSION,
      "ECDHE-ECDSA-AES128-SHA:ECDHE-ECDSA-CHACHA20-POLY1305:ECDHE-ECDSA-AES128-GCM-SHA256");
  EXPECT_FALSE(outcome.error) << outcome.error.message();
  EXPECT_EQ(outcome.cipher, "ECDHE-ECDSA-AES128-GCM-SHA256");
}

TEST_F(TlsPolicy, Tls13IsAccepted) {
  const negotiated outcome = handshake(TLS1_3_VERSION, "ECDHE-ECDSA-AES128-GCM-SHA256");
  EXPECT_FALSE(outcome.error) << outcome.error.message();
  EXPECT_EQ(outcome.cipher.rfind("TLS_", 0), 0u) << outcome.cipher;
}

TEST(TlsPolicyClient, ClientsOfferNoCbcAndNoRsaKeyExchangeSuite) {
  tls_config tls;
  tls.verify_peer = false;
  const auto context = detail::make_shared_tls_context(tls, detail::tls_role::client, "tls.");
  SSL* ssl = SSL_new(context->native_handle());
  ASSERT_NE(ssl, nullptr);
  STACK_OF(SSL_CIPHER)* offered = SSL_get1_supported_ciphers(ssl);
  ASSERT_NE(offered, nullptr);
  for (int i = 0; i < sk_SSL_CIPHER_num(offered); ++i) {
    const SSL_CIPHER* cipher = sk_SSL_CIPHER_value(offered, i);
    EXPECT_TRUE(SSL_CIPHER_is_aead(cipher)) << SSL_CIPHER_get_name(cipher);
    const int kx = SSL_CIPHER_get_kx_nid(cipher);
    EXPECT_TRUE(kx == NID_kx_ecdhe || kx == NID_kx_any) << SSL_CIPHER_get_name(cipher);
  }
  sk_SSL_CIPHER_free(offered);
  SSL_free(ssl);
}

}  // namespace
}  // namespace s3lect
