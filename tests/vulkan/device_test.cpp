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
