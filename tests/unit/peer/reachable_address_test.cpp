// reachable_address(): what a node advertises as leaderAddr when nobody told it.
#include <s3lect/health.hpp>

#include <gtest/gtest.h>

namespace s3lect {
namespace {

namespace ip = boost::asio::ip;

TEST(ReachableAddress, ASpecificAddressIsItself) {
  EXPECT_EQ(reachable_address({ip::make_address("127.0.0.1"), 8443}), "127.0.0.1:8443");
  EXPECT_EQ(reachable_address({ip::make_address("10.1.2.3"), 1}), "10.1.2.3:1");
  EXPECT_EQ(reachable_address({ip::make_address("::1"), 8443}), "[::1]:8443");
}

TEST(ReachableAddress, AWildcardBecomesAnInterfaceAddressThatIsNotAWildcard) {
  for (const char* wildcard : {"0.0.0.0", "::"}) {
    const std::string address = reachable_address({ip::make_address(wildcard), 40123});
    ASSERT_TRUE(address.ends_with(":40123")) << address;
    std::string host = address.substr(0, address.rfind(':'));
    if (host.front() == '[') host = host.substr(1, host.size() - 2);
    const ip::address parsed = ip::make_address(host);
    EXPECT_FALSE(parsed.is_unspecified()) << address;
    if (parsed.is_v6()) {
      EXPECT_FALSE(parsed.to_v6().is_link_local()) << address;
    }
  }
}

}  // namespace
}  // namespace s3lect
