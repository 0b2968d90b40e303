// ImageLocality, with the expected values of upstream's
// pkg/scheduler/framework/plugins/imagelocality/image_locality_test.go
// (TestImageLocalityPriority, TestNormalizedImageName), restated.
#include <gtest/gtest.h>

#include "tests/test_util.hpp"

namespace bulkscore {
namespace {

using namespace testutil;

const char* const kPlugin = "ImageLocality";
using Scores = std::vector<int64_t>;

ContainerImage image(std::vector<std::string> names, int64_t mib) {
  return ContainerImage{std::move(names), mib * kMiB};
}

// The node image lists of the upstream test, by the name it gives them.
Node with_images(const std::string& name, std::vector<ContainerImage> images) {
  return make_node(name, 1000, 1000, 32, {}, {}, std::move(images));
}
Node node403002000(const std::string& name) {
  return with_images(name, {image({"gcr.io/40:latest", "gcr.io/40:v1", "gcr.io/40:v1"}, 40),
                            image({"gcr.io/300:latest", "gcr.io/300:v1"}, 300), image({"gcr.io/2000:latest"}, 2000)});
}
Node node25010(const std::string& name) {
  return with_images(name, {image({"gcr.io/250:latest"}, 250), image({"gcr.io/10:latest", "gcr.io/10:v1"}, 10)});
}
Node node60040900(const std::string& name) {
  return with_images(
      name, {image({"gcr.io/600:latest"}, 600), image({"gcr.io/40:latest"}, 40), image({"gcr.io/900:latest"}, 900)});
}
Node node300600900(const std::string& name) {
  return with_images(
      name, {image({"gcr.io/300:latest"}, 300), image({"gcr.io/600:latest"}, 600), image({"gcr.io/900:latest"}, 900)});
}
Node node400030(const std::string& name) {
  return with_images(name, {image({"gcr.io/4000:latest"}, 4000), image({"gcr.io/30:latest"}, 30)});
}
Node node203040(const std::string& name) {
  return with_images(
      name, {image({"gcr.io/20:latest"}, 20), image({"gcr.io/30:latest"}, 30), image({"gcr.io/40:latest"}, 40)});
}
Node no_images(const std::string& name) { return with_images(name, {}); }

Pod pod_with_images(std::vector<std::string> images, std::vector<std::string> init_images = {}) {
  std::vector<Container> cs, inits;
  for (const auto& i : images) cs.push_back(image_container(i));
  for (const auto& i : init_images) inits.push_back(image_container(i));
  return make_pod("pod", std::move(cs), std::move(inits));
}

Scores score(const Pod& pod, const std::vector<Node>& nodes) {
  const ScoreRun r = run_score(kPlugin, nodes, {}, pod);
  EXPECT_FALSE(r.skipped);
  EXPECT_EQ(r.raw, r.normalized) << "ImageLocality has no NormalizeScore";
  return r.normalized;
}

TEST(ImageLocalityScore, TwoImagesOnTwoNodesPreferTheLargerOne) {
  // "two images spread on two nodes, prefer the larger image one"
  EXPECT_EQ(score(pod_with_images({"gcr.io/40", "gcr.io/250"}), {node403002000("node1"), node25010("node2")}),
            (Scores{0, 5}));
}

TEST(ImageLocalityScore, TwoImagesOnOneNodePreferThatNode) {
  // "two images on one node, prefer this node"
  EXPECT_EQ(score(pod_with_images({"gcr.io/40", "gcr.io/300"}), {node403002000("node1"), node25010("node2")}),
            (Scores{7, 0}));
}

TEST(ImageLocalityScore, SumAboveTheLimitIsClamped) {
  // "if exceed limit, use limit"
  EXPECT_EQ(score(pod_with_images({"gcr.io/10", "gcr.io/4000"}), {node400030("node1"), node25010("node2")}),
            (Scores{100, 0}));
}

TEST(ImageLocalityScore, SpreadOverThreeNodesIncludingOneWithoutImages) {
  // "if exceed limit, use limit (with node which has no images present)":
  // 4000 MiB x 1/3 truncated, then 100 * (sum - 23 MiB) / (2000 - 23) MiB.
  EXPECT_EQ(score(pod_with_images({"gcr.io/10", "gcr.io/4000"}),
                  {node400030("node1"), node25010("node2"), no_images("node3")}),
            (Scores{66, 0, 0}));
}

TEST(ImageLocalityScore, MultipleLargeImages) {
  // "pod with multiple large images, node2 is preferred"
  EXPECT_EQ(score(pod_with_images({"gcr.io/300", "gcr.io/600", "gcr.io/900"}),
                  {node60040900("node1"), node300600900("node2"), no_images("node3")}),
            (Scores{32, 36, 0}));
}

TEST(ImageLocalityScore, MultipleSmallImages) {
  // "pod with multiple small images"
  EXPECT_EQ(score(pod_with_images({"gcr.io/30", "gcr.io/40"}), {node203040("node1"), node400030("node2")}),
            (Scores{1, 0}));
}

TEST(ImageLocalityScore, InitContainerImagesCount) {
  // "include InitContainers: two images spread on two nodes, prefer the larger image one"
  EXPECT_EQ(score(pod_with_images({"gcr.io/30"}, {"gcr.io/300"}), {node403002000("node1"), node203040("node2")}),
            (Scores{6, 0}));
}

TEST(ImageLocalityScore, ImageListedTwiceInThePodCountsTwice) {
  // 2 x 300 MiB x 1/2 = 300 MiB over a 2000 MiB limit: 100 * 277 / 1977 = 14.
  EXPECT_EQ(score(pod_with_images({"gcr.io/300", "gcr.io/300"}), {node403002000("node1"), node25010("node2")}),
            (Scores{14, 0}));
}

TEST(ImageLocalityNormalizedImageName, UpstreamTestNormalizedImageName) {
  // TestNormalizedImageName
  EXPECT_EQ(normalize_image_name("root"), "root:latest");
  EXPECT_EQ(normalize_image_name("root:tag"), "root:tag");
  EXPECT_EQ(normalize_image_name("gcr.io:5000/root"), "gcr.io:5000/root:latest");
  EXPECT_EQ(normalize_image_name("root@sha256:e0d9b4b6fc2c23ae8e5e0e8b6c1b8a3c6fa6fcf6e2bc4d62c7a3ab4e3f5f0e81"),
            "root@sha256:e0d9b4b6fc2c23ae8e5e0e8b6c1b8a3c6fa6fcf6e2bc4d62c7a3ab4e3f5f0e81");
}

}  // namespace
}  // namespace bulkscore
