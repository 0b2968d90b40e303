// The Kubernetes name rules in host/input/labels.hpp, as apimachinery's
// util/validation applies them.
#include "host/input/labels.hpp"

#include <gtest/gtest.h>

#include <string>

namespace bulkscore {
namespace {

TEST(Labels, QualifiedNames) {
  for (const char* ok : {"a", "A", "0", "app", "app.kubernetes.io/name", "example.com/My_Name-1", "a/b", "x.y/z.z",
                         "topology.kubernetes.io/zone", "nvidia.com/gpu"}) {
    EXPECT_TRUE(is_qualified_name(ok)) << ok;
    EXPECT_EQ(qualified_name_problem(ok), "") << ok;
  }
  EXPECT_TRUE(is_qualified_name(std::string(63, 'a')));
  EXPECT_TRUE(is_qualified_name(std::string(253, 'a') + "/" + std::string(63, 'b')));
  for (const char* bad : {"", "-a", "a-", "_a", "a_", ".a", "a b", "a/b/c", "/a", "a/", "A.com/b", "-x.com/b",
                          "x..com/b", "x.com./b", "é"}) {
    EXPECT_FALSE(is_qualified_name(bad)) << bad;
    EXPECT_NE(qualified_name_problem(bad), "") << bad;
  }
  EXPECT_FALSE(is_qualified_name(std::string(64, 'a')));
  EXPECT_FALSE(is_qualified_name(std::string(254, 'a') + "/b"));
  EXPECT_NE(qualified_name_problem("a/b/c").find("qualified name"), std::string::npos);
  EXPECT_NE(qualified_name_problem("/a").find("prefix"), std::string::npos);
  EXPECT_NE(qualified_name_problem("a/").find("name part must not be empty"), std::string::npos);
  EXPECT_NE(qualified_name_problem(std::string(64, 'a')).find("at most 63"), std::string::npos);
}

// IsDNS1123Subdomain limits the whole prefix to 253 characters and nothing
// else: a 64-character part is fine (the old copy in labels.cpp refused it).
TEST(Labels, SubdomainPartsHaveNoLengthLimitOfTheirOwn) {
  const std::string prefix = std::string(64, 'a') + ".example.com";
  EXPECT_TRUE(is_dns1123_subdomain(prefix));
  EXPECT_TRUE(is_qualified_name(prefix + "/name"));
  EXPECT_FALSE(is_dns1123_subdomain(""));
  EXPECT_FALSE(is_dns1123_subdomain("Upper.com"));
  EXPECT_FALSE(is_dns1123_subdomain("under_score.com"));
  EXPECT_TRUE(is_dns1123_subdomain("0-0.a"));
}

TEST(Labels, LabelValues) {
  for (const char* ok : {"", "a", "A-b_c.d", "123", "v1.2.3"}) {
    EXPECT_TRUE(is_valid_label_value(ok)) << ok;
    EXPECT_EQ(label_value_problem(ok), "") << ok;
  }
  EXPECT_TRUE(is_valid_label_value(std::string(63, 'v')));
  for (const char* bad : {"-a", "a-", "a/b", "a b", "ä", "a:b"}) {
    EXPECT_FALSE(is_valid_label_value(bad)) << bad;
    EXPECT_NE(label_value_problem(bad), "") << bad;
  }
  EXPECT_FALSE(is_valid_label_value(std::string(64, 'v')));
  EXPECT_NE(label_value_problem(std::string(64, 'v')).find("at most 63"), std::string::npos);
}

}  // namespace
}  // namespace bulkscore
