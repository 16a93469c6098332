// The webui emphasis parser: the examples of webui's own parse_prompt_attention docstring case for case (weights
// compared exactly: the same doubles Python prints), then nesting, escapes, unbalanced brackets, BREAK, and the
// errors that replace webui's silent acceptance of absurd input.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "models/prompt/prompt_attention.h"

namespace sdgen::prompt {
namespace {

using Fragments = std::vector<PromptFragment>;

PromptFragment text(const std::string& t, double w) { return {t, w, false}; }
PromptFragment brk() { return {"", -1.0, true}; }

Fragments parse(const std::string& s) { return parsePromptAttention(s); }

// The message of the PromptSyntaxError parsing `s` throws, and its position.
std::pair<std::string, size_t> errorOf(const std::string& s) {
  try {
    parsePromptAttention(s, "the prompt");
  } catch (const PromptSyntaxError& e) {
    return {e.what(), e.position()};
  }
  ADD_FAILURE() << "no error for '" << s << "'";
  return {};
}

void PrintTo(const PromptFragment& f, std::ostream* os) {
  *os << (f.isBreak ? "BREAK" : "'" + f.text + "'") << ":" << std::to_string(f.weight);
}

TEST(PromptAttention, WebuiDocstringExamples) {
  EXPECT_EQ(parse("normal text"), (Fragments{text("normal text", 1.0)}));
  EXPECT_EQ(parse("an (important) word"), (Fragments{text("an ", 1.0), text("important", 1.1), text(" word", 1.0)}));
  EXPECT_EQ(parse("(unbalanced"), (Fragments{text("unbalanced", 1.1)}));
  EXPECT_EQ(parse("\\(literal\\]"), (Fragments{text("(literal]", 1.0)}));
  EXPECT_EQ(parse("(unnecessary)(parens)"), (Fragments{text("unnecessaryparens", 1.1)}));
  EXPECT_EQ(parse("a (((house:1.3)) [on] a (hill:0.5), sun, (((sky)))."),
            (Fragments{text("a ", 1.0), text("house", 1.5730000000000004), text(" ", 1.1), text("on", 1.0),
                       text(" a ", 1.1), text("hill", 0.55), text(", sun, ", 1.1), text("sky", 1.4641000000000006),
                       text(".", 1.1)}));
}

TEST(PromptAttention, NestingMultipliesInCloseOrder) {
  EXPECT_EQ(parse("((a))"), (Fragments{text("a", 1.2100000000000002)}));
  EXPECT_EQ(parse("[[a]]"), (Fragments{text("a", 0.8264462809917354)}));
  EXPECT_EQ(parse("([a])"), (Fragments{text("a", 1.0)}));  // 1/1.1 then 1.1: exactly 1 again
  EXPECT_EQ(parse("x ((y:1.3)) z"), (Fragments{text("x ", 1.0), text("y", 1.4300000000000002), text(" z", 1.0)}));
  // ( and [ are separate stacks: crossed brackets still close their own kind.
  EXPECT_EQ(parse("([a)]"), (Fragments{text("a", 1.0)}));
  EXPECT_EQ(parse("([a)b]"), (Fragments{text("a", 1.0), text("b", 0.9090909090909091)}));
  // 32 open at once is the limit; the weight is 1.1 multiplied 32 times.
  EXPECT_EQ(parse(std::string(32, '(') + "a"), (Fragments{text("a", 21.1137767453526)}));
}

TEST(PromptAttention, Weights) {
  EXPECT_EQ(parse("(a:1.5)"), (Fragments{text("a", 1.5)}));
  EXPECT_EQ(parse("(a: 1.5 )"), (Fragments{text("a", 1.5)}));
  EXPECT_EQ(parse("(a:\t+.5\n)"), (Fragments{text("a", 0.5)}));
  EXPECT_EQ(parse("(a:\u30002)"), (Fragments{text("a", 2.0)}));  // Python's \s: ideographic space too
  EXPECT_EQ(parse("(a:007)"), (Fragments{text("a", 7.0)}));
  EXPECT_EQ(parse("(a:-1) b"), (Fragments{text("a", -1.0), text(" b", 1.0)}));  // negative weights as in webui
  EXPECT_EQ(parse("(a:0)"), (Fragments{text("a", 0.0)}));
  // A weight of exactly 1 merges with its neighbours: they are tokenized as one text.
  EXPECT_EQ(parse("x (a:1.) y"), (Fragments{text("x a y", 1.0)}));
  // Not a weight (webui's number has no exponent, no comma): the ':' is text and ')' closes with 1.1.
  EXPECT_EQ(parse("(a:1e3)"), (Fragments{text("a:1e3", 1.1)}));
  EXPECT_EQ(parse("(a:1,5)"), (Fragments{text("a:1,5", 1.1)}));
  EXPECT_EQ(parse("(a:b)"), (Fragments{text("a:b", 1.1)}));
  EXPECT_EQ(parse("(a:+)"), (Fragments{text("a:+", 1.1)}));  // a sign alone is no number
  // With no '(' open, a weight is literal text, even a malformed one (webui never converts it).
  EXPECT_EQ(parse("a:1.2.3) b"), (Fragments{text("a:1.2.3) b", 1.0)}));
  EXPECT_EQ(parse("time: 12:30"), (Fragments{text("time: 12:30", 1.0)}));
}

TEST(PromptAttention, EscapesAndUnbalancedBrackets) {
  EXPECT_EQ(parse("\\(a\\)"), (Fragments{text("(a)", 1.0)}));
  EXPECT_EQ(parse("(\\))"), (Fragments{text(")", 1.1)}));
  EXPECT_EQ(parse("\\[x\\]"), (Fragments{text("[x]", 1.0)}));
  EXPECT_EQ(parse("a\\\\b"), (Fragments{text("a\\b", 1.0)}));
  // A backslash before anything else disappears, as in webui (also at the end).
  EXPECT_EQ(parse("a\\b\\"), (Fragments{text("ab", 1.0)}));
  EXPECT_EQ(parse("(a\\b)"), (Fragments{text("ab", 1.1)}));
  // Closing brackets with nothing open are text; open ones reach to the end.
  EXPECT_EQ(parse("a) b]"), (Fragments{text("a) b]", 1.0)}));
  EXPECT_EQ(parse("[a"), (Fragments{text("a", 0.9090909090909091)}));
  EXPECT_EQ(parse("x (a [b"), (Fragments{text("x ", 1.0), text("a ", 1.1), text("b", 1.0)}));
  EXPECT_EQ(parse("(a))"), (Fragments{text("a", 1.1), text(")", 1.0)}));
  EXPECT_EQ(parse(""), (Fragments{text("", 1.0)}));
  EXPECT_EQ(parse("()"), (Fragments{text("", 1.0)}));
  EXPECT_EQ(parse("café (crème)"), (Fragments{text("café ", 1.0), text("crème", 1.1)}));
}

TEST(PromptAttention, Break) {
  EXPECT_EQ(parse("a BREAK b"), (Fragments{text("a", 1.0), brk(), text("b", 1.0)}));
  EXPECT_EQ(parse("a  BREAK\n\tb"), (Fragments{text("a", 1.0), brk(), text("b", 1.0)}));
  EXPECT_EQ(parse("BREAK"), (Fragments{text("", 1.0), brk(), text("", 1.0)}));
  EXPECT_EQ(parse("a, BREAK, b"), (Fragments{text("a,", 1.0), brk(), text(", b", 1.0)}));
  EXPECT_EQ(parse("a BREAK BREAK b"), (Fragments{text("a", 1.0), brk(), text("", 1.0), brk(), text("b", 1.0)}));
  EXPECT_EQ(parse("(a) BREAK [b]"),
            (Fragments{text("a", 1.1), text("", 1.0), brk(), text("", 1.0), text("b", 0.9090909090909091)}));
  // Only the upper-case word on its own.
  EXPECT_EQ(parse("aBREAK b"), (Fragments{text("aBREAK b", 1.0)}));
  EXPECT_EQ(parse("a BREAKS"), (Fragments{text("a BREAKS", 1.0)}));
  EXPECT_EQ(parse("a_BREAK"), (Fragments{text("a_BREAK", 1.0)}));
  EXPECT_EQ(parse("a break b"), (Fragments{text("a break b", 1.0)}));
  EXPECT_EQ(parse("a:BREAK:b"), (Fragments{text("a:", 1.0), brk(), text(":b", 1.0)}));
}

TEST(PromptAttention, ErrorsNameThePromptAndPosition) {
  auto [malformed, at] = errorOf("a (house:1.2.3) b");
  EXPECT_EQ(at, 10u);
  EXPECT_NE(malformed.find("the prompt: malformed weight '1.2.3' at character 10: \"a (house:1.2.3) b\""),
            std::string::npos)
      << malformed;
  EXPECT_NE(errorOf("(a:.)").first.find("malformed weight '.'"), std::string::npos);

  auto [range, rangeAt] = errorOf("(a:1000)");
  EXPECT_EQ(rangeAt, 4u);
  EXPECT_NE(range.find("weight '1000' is out of range (at most 100 in magnitude)"), std::string::npos) << range;
  EXPECT_NE(errorOf("(a:-100.5)").first.find("out of range"), std::string::npos);
  // webui reads these as 1e30 and inf; they are refused here.
  EXPECT_NE(errorOf("(a:1" + std::string(30, '0') + ")").first.find("out of range"), std::string::npos);
  EXPECT_NE(errorOf("(a:" + std::string(400, '9') + ")").first.find("out of range"), std::string::npos);
  auto [product, productAt] = errorOf("x ((big:50):50)");
  EXPECT_EQ(productAt, 5u);
  EXPECT_NE(product.find("the brackets around this text multiply its weight to 2500, beyond the limit of 100"),
            std::string::npos)
      << product;

  auto [inside, insideAt] = errorOf("(a BREAK b)");
  EXPECT_EQ(insideAt, 4u);
  EXPECT_NE(inside.find("BREAK inside brackets"), std::string::npos) << inside;
  EXPECT_NE(errorOf("[a BREAK").first.find("BREAK inside brackets"), std::string::npos);

  auto [deep, deepAt] = errorOf(std::string(33, '(') + "a");
  EXPECT_EQ(deepAt, 33u);
  EXPECT_NE(deep.find("nested deeper than 32"), std::string::npos) << deep;
  EXPECT_NE(errorOf(std::string(20, '(') + std::string(13, '[')).first.find("nested deeper"), std::string::npos);

  auto [big, bigAt] = errorOf(std::string(PromptLimits::kMaxBytes + 1, 'a'));
  EXPECT_EQ(bigAt, 0u);
  EXPECT_NE(big.find("the prompt is 16385 bytes long; at most 16384 are accepted"), std::string::npos) << big;
  EXPECT_NO_THROW(parse(std::string(PromptLimits::kMaxBytes, 'a')));

  // The excerpt of a long prompt is cut around the position; positions count characters, not bytes.
  const std::string far = "\u00e9\u00e9\u00e9" + std::string(40, 'x') + "(a:1..2)" + std::string(40, 'y');
  auto [cut, cutAt] = errorOf(far);
  EXPECT_EQ(cutAt, 47u);
  EXPECT_NE(cut.find("\"..." + std::string(17, 'x') + "(a:1..2)" + std::string(16, 'y') + "...\""), std::string::npos)
      << cut;

  // The name given by the caller is the one in the message.
  try {
    parsePromptAttention("(a:1.2.3)", "-n/--negative-prompt");
    ADD_FAILURE();
  } catch (const PromptSyntaxError& e) {
    EXPECT_EQ(std::string(e.what()).rfind("-n/--negative-prompt: malformed weight", 0), 0u) << e.what();
  }
}

}  // namespace
}  // namespace sdgen::prompt
