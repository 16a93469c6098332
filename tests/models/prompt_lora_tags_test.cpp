// webui's <lora:...> prompt tags (models/prompt/lora_tags.h): cut out of the text as webui's re_extra_net
// <(\w+):([^>]+)> does, scales read as its Lora extension reads them.
#include <gtest/gtest.h>

#include "models/prompt/lora_tags.h"
#include "tests/test_support.h"

namespace sdgen {
namespace {

TEST(PromptLoraTags, CutOutOfThePromptWithTheirScales) {
  prompt::PromptLoras p = prompt::extractLoraTags("a cat <lora:style:0.8>, (red:1.2) <lora:detail> <lyco:old:0.5:0.25>");
  EXPECT_EQ(p.prompt, "a cat , (red:1.2)  ");
  ASSERT_EQ(p.loras.size(), 3u);
  EXPECT_EQ(p.loras[0].name, "style");
  EXPECT_FLOAT_EQ(p.loras[0].textScale, 0.8f);
  EXPECT_FLOAT_EQ(p.loras[0].unetScale, 0.8f);  // the UNet scale defaults to the text encoder's
  EXPECT_EQ(p.loras[0].text, "<lora:style:0.8>");
  EXPECT_EQ(p.loras[1].name, "detail");
  EXPECT_FLOAT_EQ(p.loras[1].textScale, 1.f);
  EXPECT_EQ(p.loras[2].name, "old");
  EXPECT_FLOAT_EQ(p.loras[2].textScale, 0.5f);
  EXPECT_FLOAT_EQ(p.loras[2].unetScale, 0.25f);
  EXPECT_TRUE(p.warnings.empty());
}

TEST(PromptLoraTags, NamedScalesOverridePositionalOnes) {
  prompt::PromptLoras p = prompt::extractLoraTags("<lora:x:0.3:unet=0.9><lora:y:te=0.2>");
  ASSERT_EQ(p.loras.size(), 2u);
  EXPECT_FLOAT_EQ(p.loras[0].textScale, 0.3f);
  EXPECT_FLOAT_EQ(p.loras[0].unetScale, 0.9f);
  EXPECT_FLOAT_EQ(p.loras[1].textScale, 0.2f);
  EXPECT_FLOAT_EQ(p.loras[1].unetScale, 0.2f);
  EXPECT_EQ(p.prompt, "");
}

TEST(PromptLoraTags, TextThatIsNoTagStays) {
  // no word before ':', nothing between ':' and '>', no '>', '<' inside a word: as re_extra_net, not tags
  for (const char* s : {"a <:x> b", "<lora:> c", "<lora:x", "x < y: z", "a<b <c:d"}) {
    prompt::PromptLoras p = prompt::extractLoraTags(s);
    EXPECT_EQ(p.prompt, s);
    EXPECT_TRUE(p.loras.empty()) << s;
  }
  // the match starts at the last '<' that begins one
  prompt::PromptLoras p = prompt::extractLoraTags("a<<lora:n:2>");
  EXPECT_EQ(p.prompt, "a<");
  ASSERT_EQ(p.loras.size(), 1u);
  EXPECT_FLOAT_EQ(p.loras[0].unetScale, 2.f);
}

TEST(PromptLoraTags, OtherKindsAreRemovedWithAWarning) {
  prompt::PromptLoras p = prompt::extractLoraTags("a <hypernet:h:1> b");
  EXPECT_EQ(p.prompt, "a  b");
  ASSERT_EQ(p.warnings.size(), 1u);
  EXPECT_NE(p.warnings[0].find("'hypernet' are not supported"), std::string::npos);
}

TEST(PromptLoraTags, BadScalesAreErrorsNamingTheTag) {
  test::expectErrorContaining([] { prompt::extractLoraTags("<lora:x:strong>"); },
                              "prompt tag '<lora:x:strong>': 'strong' is not a number");
  test::expectErrorContaining([] { prompt::extractLoraTags("<lora: :1>"); }, "names no LoRA");
  test::expectErrorContaining([] { prompt::extractLoraTags("<lora:x:dyn=4>"); }, "'dyn=' is not supported");
  test::expectErrorContaining([] { prompt::extractLoraTags("<lora:x:1:1:1>"); }, "more than two scales");
}

}  // namespace
}  // namespace sdgen
