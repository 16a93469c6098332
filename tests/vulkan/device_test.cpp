#include "engine/device.h"
#include "engine/error.h"

#include "tests/test_support.h"

namespace sdgen {
namespace {

DeviceInfo fakeDevice(const char* type) {
  DeviceInfo d;
  d.type = type;
  return d;
}

TEST(DeviceChoice, PrefersDiscreteThenIntegratedThenCpu) {
  std::vector<DeviceInfo> devs = {fakeDevice("cpu"), fakeDevice("integrated"), fakeDevice("discrete")};
  EXPECT_EQ(chooseDevice(devs, {}), 2u);
  devs = {fakeDevice("cpu"), fakeDevice("integrated")};
  EXPECT_EQ(chooseDevice(devs, {}), 1u);
  devs = {fakeDevice("cpu")};
  EXPECT_EQ(chooseDevice(devs, {}), 0u);
}

TEST(DeviceChoice, ExplicitIndexWinsAndIsRangeChecked) {
  std::vector<DeviceInfo> devs = {fakeDevice("cpu"), fakeDevice("discrete")};
  EXPECT_EQ(chooseDevice(devs, {.index = 0}), 0u);
  try {
    chooseDevice(devs, {.index = 5});
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("--device 5"), std::string::npos) << e.what();
  }
  EXPECT_THROW(chooseDevice({}, {}), Error);
}

// The H200's list (VK_NV_cooperative_matrix2, 2026-11-29): granularity 32x32x16 at 256 invocations, 32x16x16 at
// 128, max dimension 1024, max workgroup 256.
TEST(DeviceInfoFlexible, WorkgroupScopeShapesFollowGranularityTypesAndSize) {
  DeviceInfo d;
  d.coopMatrixWorkgroupScope = true;
  d.coopMatrixFlexibleMaxDimension = 1024;
  d.coopMatrixWorkgroupMaxSize = 256;
  d.coopMatrixFlexibleShapes = {{32, 32, 16, "f16", "f16", "f32", "f32", "workgroup", 256},
                                {32, 16, 16, "f16", "f16", "f16", "f16", "workgroup", 128}};
  EXPECT_TRUE(d.hasWorkgroupCoopMatrix(128, 128, 32, "f32", 256));
  EXPECT_TRUE(d.hasWorkgroupCoopMatrix(64, 96, 16, "f32", 256));
  EXPECT_FALSE(d.hasWorkgroupCoopMatrix(128, 128, 8, "f32", 256));     // K not a multiple of 16
  EXPECT_FALSE(d.hasWorkgroupCoopMatrix(48, 128, 32, "f32", 256));     // M not a multiple of 32
  EXPECT_FALSE(d.hasWorkgroupCoopMatrix(128, 128, 32, "f32", 128));    // no f32 shape at 128 invocations
  EXPECT_TRUE(d.hasWorkgroupCoopMatrix(128, 16, 32, "f16", 128));
  EXPECT_FALSE(d.hasWorkgroupCoopMatrix(2048, 128, 32, "f32", 256));   // over the max dimension
  d.coopMatrixWorkgroupScope = false;                                 // not enabled on this device
  EXPECT_FALSE(d.hasWorkgroupCoopMatrix(128, 128, 32, "f32", 256));
}

class DeviceInfoTest : public test::VulkanTest {};

TEST_F(DeviceInfoTest, RecordIsFilledIn) {
  const DeviceInfo& info = ctx().info();
  EXPECT_FALSE(info.name.empty());
  EXPECT_GE(VK_API_VERSION_MINOR(info.apiVersion), 3u);
  EXPECT_GE(info.subgroupSize, 4u);
  EXPECT_LE(info.minSubgroupSize, info.maxSubgroupSize);
  EXPECT_GE(info.sharedMemoryPerWorkgroup, 16384u);
  EXPECT_GE(info.maxWorkgroupInvocations, 256u);
  EXPECT_GT(info.maxStorageBufferRange, 0u);
  EXPECT_FALSE(info.heaps.empty());
  EXPECT_TRUE(info.bufferDeviceAddress);
  std::string text = info.describe();
  EXPECT_NE(text.find(info.name), std::string::npos);
  EXPECT_NE(text.find("subgroup"), std::string::npos);
  // Print it: the test log doubles as the platform record (docs/platforms.md).
  std::printf("%s", text.c_str());
}

}  // namespace
}  // namespace sdgen
