// Determinism (issue 24): the same request and seed give a bit-identical image, for every sampler (the ancestral
// and SDE ones draw fresh noise every step from torch's CPU generator), twice in one process with the pipeline
// kept loaded (as the GUI and the server use it), and across processes: each run writes one digest line per
// sampler to $SDGEN_DETERMINISM_DIGESTS when it is set, and the ctest entry determinism_across_processes
// (tests/models/CMakeLists.txt) runs this test twice and compares the two files byte for byte.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>

#include "models/pipeline/text_to_image.h"
#include "tests/models/network_fixture.h"
#include "tests/test_support.h"

namespace sdgen {
namespace {

// FNV-1a over the float pixels' bytes: any bit that differs changes it.
uint64_t digest(const std::vector<float>& v) {
  uint64_t h = 1469598103934665603ull;
  const auto* p = reinterpret_cast<const uint8_t*>(v.data());
  for (size_t i = 0; i < v.size() * sizeof(float); ++i) h = (h ^ p[i]) * 1099511628211ull;
  return h;
}

class Determinism : public test::VulkanTest {};

TEST_F(Determinism, SameSeedSameBitsForEverySampler) {
  pipeline::TextToImage t2i(ctx(), {.modelPath = test::dataPath("tiny-sd1")});
  pipeline::GenerationRequest req;
  req.prompt = "a (red:1.2) circle";
  req.negativePrompt = "blurry";
  req.steps = 2;
  req.width = 16;
  req.height = 16;
  req.seed = 20261124;
  std::string lines;
  size_t count = 0;
  const sampling::SamplerKind* kinds = sampling::allSamplerKinds(&count);
  ASSERT_EQ(count, 13u);  // a new sampler must join this test
  for (size_t k = 0; k < count; ++k) {
    req.sampler = kinds[k];
    SCOPED_TRACE(sampling::samplerFlagName(req.sampler));
    const pipeline::Image a = t2i.generate(req);
    const char* digests = std::getenv("SDGEN_DETERMINISM_DIGESTS");
    if (digests) {  // the across-processes run (ctest determinism_across_processes): one image per sampler
      char line[96];
      std::snprintf(line, sizeof line, "%s %016llx\n", sampling::samplerFlagName(req.sampler),
                    static_cast<unsigned long long>(digest(a.pixels)));
      lines += line;
      continue;
    }
    const pipeline::Image b = t2i.generate(req);
    ASSERT_EQ(a.pixels.size(), size_t(16 * 16 * 3));
    ASSERT_EQ(a.pixels.size(), b.pixels.size());
    EXPECT_EQ(std::memcmp(a.pixels.data(), b.pixels.data(), a.pixels.size() * sizeof(float)), 0);
    EXPECT_EQ(a.rgb, b.rgb);
    // The seed is used at all: another one gives another image.
    pipeline::GenerationRequest other = req;
    other.seed = req.seed + 1;
    EXPECT_NE(digest(t2i.generate(other).pixels), digest(a.pixels));
  }
  if (const char* path = std::getenv("SDGEN_DETERMINISM_DIGESTS")) {
    std::ofstream out(path, std::ios::trunc);
    out << lines;
    ASSERT_TRUE(out.good()) << "cannot write " << path;
  }
}

}  // namespace
}  // namespace sdgen
