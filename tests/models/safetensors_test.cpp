// safetensors reader: files written here byte by byte, read back in every dtype; every malformed file is
// refused with a message naming the file and the tensor.
#include <gtest/gtest.h>

#include <bit>
#include <cstring>
#include <nlohmann/json.hpp>

#include "engine/dtype.h"
#include "models/safetensors.h"
#include "models/unsafe_checkpoint.h"
#include "tests/models/models_test_util.h"

namespace sdgen::models {
namespace {

using nlohmann::json;
using test::errorOf;
using test::TempDir;

template <typename T>
std::string rawBytes(const std::vector<T>& v) {
  return std::string(reinterpret_cast<const char*>(v.data()), v.size() * sizeof(T));
}

// A safetensors file: 8-byte little-endian header length, the JSON header, the data section.
std::string safetensorsBytes(const std::string& header, const std::string& data) {
  uint64_t n = header.size();
  std::string out(8, '\0');
  for (int i = 0; i < 8; ++i) out[i] = static_cast<char>((n >> (8 * i)) & 0xFF);
  return out + header + data;
}

uint16_t toBf16(float f) { return static_cast<uint16_t>(std::bit_cast<uint32_t>(f) >> 16); }  // exact for these

const std::vector<float> kValues = {1.5f, -2.0f, 3.25f, 0.0f, 1024.0f, -0.125f};

// One tensor "w" of shape [2,3] per dtype, plus metadata and a second tensor after it.
std::string sampleFile(const std::string& dtype) {
  std::string w;
  if (dtype == "F32") {
    w = rawBytes(kValues);
  } else if (dtype == "F16") {
    std::vector<uint16_t> h;
    for (float v : kValues) h.push_back(floatToHalf(v));
    w = rawBytes(h);
  } else {
    std::vector<uint16_t> b;
    for (float v : kValues) b.push_back(toBf16(v));
    w = rawBytes(b);
  }
  std::string ids = rawBytes(std::vector<int64_t>{0, 1, 2});
  json header = {{"__metadata__", {{"format", "pt"}}},
                 {"w", {{"dtype", dtype}, {"shape", {2, 3}}, {"data_offsets", {0, w.size()}}}},
                 {"position_ids", {{"dtype", "I64"}, {"shape", {1, 3}}, {"data_offsets", {w.size(), w.size() + 24}}}}};
  return safetensorsBytes(header.dump(), w + ids);
}

class SafetensorsRoundTrip : public ::testing::TestWithParam<const char*> {};

TEST_P(SafetensorsRoundTrip, ReadsBackAsF32AndF16) {
  TempDir dir;
  std::string dtype = GetParam();
  SafetensorsFile f = SafetensorsFile::open(dir.write("sample.safetensors", sampleFile(dtype)));
  EXPECT_EQ(f.names(), (std::vector<std::string>{"position_ids", "w"}));
  EXPECT_EQ(f.metadata().at("format"), "pt");
  const TensorInfo* w = f.find("w");
  ASSERT_NE(w, nullptr);
  EXPECT_EQ(tensorDTypeName(w->dtype), dtype);
  EXPECT_EQ(w->shape, (std::vector<int64_t>{2, 3}));
  EXPECT_EQ(w->elementCount(), 6u);
  EXPECT_EQ(w->size, 6 * tensorDTypeSize(w->dtype));
  EXPECT_EQ(f.bytes(*w).size(), w->size);
  EXPECT_EQ(f.find("missing"), nullptr);

  // Every sample value is exact in all three types, so the conversions are exact.
  std::vector<float> asF32 = f.readAsF32("w");
  EXPECT_EQ(asF32, kValues);
  std::vector<uint16_t> asF16(6);
  f.readAsF16("w", asF16);
  for (size_t i = 0; i < kValues.size(); ++i) EXPECT_EQ(asF16[i], floatToHalf(kValues[i])) << i;

  EXPECT_NO_THROW(f.expectShape("w", {2, 3}));
  EXPECT_NO_THROW(f.expectShape("position_ids", {1, 3}));
}

INSTANTIATE_TEST_SUITE_P(Dtypes, SafetensorsRoundTrip, ::testing::Values("F32", "F16", "BF16"));

TEST(Safetensors, ConversionRoundsOnce) {
  TempDir dir;
  // 1 + 2^-11 is halfway between two halves: F32 -> F16 rounds it to even (1.0).
  std::vector<float> v = {1.0f + 1.0f / 2048.0f, 1e-8f, 1e6f};
  json header = {{"x", {{"dtype", "F32"}, {"shape", {3}}, {"data_offsets", {0, 12}}}}};
  SafetensorsFile f = SafetensorsFile::open(dir.write("r.safetensors", safetensorsBytes(header.dump(), rawBytes(v))));
  std::vector<uint16_t> h(3);
  f.readAsF16("x", h);
  EXPECT_EQ(h[0], 0x3C00);  // 1.0
  EXPECT_EQ(h[1], 0x0000);  // underflows to zero
  EXPECT_EQ(h[2], 0x7C00);  // overflows to infinity
}

TEST(Safetensors, ScalarsAndEmptyTensors) {
  TempDir dir;
  json header = {{"scalar", {{"dtype", "F32"}, {"shape", json::array()}, {"data_offsets", {0, 4}}}},
                 {"empty", {{"dtype", "F16"}, {"shape", {0, 8}}, {"data_offsets", {4, 4}}}}};
  SafetensorsFile f =
      SafetensorsFile::open(dir.write("s.safetensors", safetensorsBytes(header.dump(), rawBytes(std::vector{2.5f}))));
  EXPECT_EQ(f.readAsF32("scalar"), std::vector<float>{2.5f});
  EXPECT_TRUE(f.readAsF32("empty").empty());
  EXPECT_EQ(formatShape(f.get("scalar").shape), "[]");
}

TEST(Safetensors, HeaderPaddedWithSpacesAndEmptyHeader) {
  TempDir dir;
  json header = {{"x", {{"dtype", "F32"}, {"shape", {1}}, {"data_offsets", {0, 4}}}}};
  std::string padded = header.dump() + "      ";  // writers pad the header to an 8-byte multiple
  EXPECT_EQ(SafetensorsFile::open(dir.write("p.safetensors", safetensorsBytes(padded, rawBytes(std::vector{1.f}))))
                .size(),
            1u);
  EXPECT_EQ(SafetensorsFile::open(dir.write("e.safetensors", safetensorsBytes("{}", ""))).size(), 0u);
}

TEST(Safetensors, ShapeMismatchMessage) {
  TempDir dir;
  std::string path = dir.write("m.safetensors", sampleFile("F32"));
  SafetensorsFile f = SafetensorsFile::open(path);
  EXPECT_EQ(errorOf([&] { f.expectShape("w", {3, 2}); }),
            "tensor 'w' in '" + path + "' has shape [2,3], expected [3,2]");
  std::string msg = errorOf([&] { f.expectShape("nope", {1}); });
  EXPECT_NE(msg.find("'nope'"), std::string::npos) << msg;
  EXPECT_NE(msg.find(path), std::string::npos) << msg;
}

TEST(Safetensors, ConversionErrorsNameFileAndTensor) {
  TempDir dir;
  std::string path = dir.write("c.safetensors", sampleFile("F16"));
  SafetensorsFile f = SafetensorsFile::open(path);
  std::vector<float> wrongSize(5);
  std::vector<float> three(3);
  for (const std::string& msg : {errorOf([&] { f.readAsF32("w", wrongSize); }),
                                 errorOf([&] { f.readAsF32("position_ids", three); })}) {
    EXPECT_NE(msg.find(path), std::string::npos) << msg;
    EXPECT_NE(msg.find("tensor '"), std::string::npos) << msg;
  }
  EXPECT_NE(errorOf([&] { f.readAsF32("position_ids", three); }).find("I64"), std::string::npos);
}

// A malformed file and the text its error must contain besides the path.
struct Corruption {
  const char* name;
  std::string bytes;
  std::string mentions;  // the tensor (or the problem, where no tensor is involved)
};

std::vector<Corruption> corruptions() {
  auto entry = [](const char* dtype, json shape, uint64_t begin, uint64_t end) {
    return json{{"dtype", dtype}, {"shape", shape}, {"data_offsets", {begin, end}}};
  };
  std::string data16 = std::string(16, '\x01');
  std::string valid = sampleFile("F32");
  std::string hugeLength = valid;
  hugeLength[6] = '\x7f';
  return {
      {"too short", "abc", "too short"},
      {"header length past the end", hugeLength, "header length"},
      {"truncated inside the header", valid.substr(0, 40), "header length"},
      {"truncated data", valid.substr(0, valid.size() - 10), "tensor 'position_ids'"},
      {"invalid JSON", safetensorsBytes("{\"w\": {\"dtype\": ", data16), "not valid JSON"},
      {"header not an object", safetensorsBytes("[1, 2]", ""), "JSON object"},
      {"overlapping ranges",
       safetensorsBytes(json{{"a", entry("F32", {3}, 0, 12)}, {"b", entry("F32", {2}, 8, 16)}}.dump(), data16),
       "tensor 'b'"},
      {"bad dtype", safetensorsBytes(json{{"d", entry("F64", {2}, 0, 16)}}.dump(), data16), "tensor 'd'"},
      {"size does not match shape", safetensorsBytes(json{{"s", entry("F32", {3}, 0, 16)}}.dump(), data16),
       "tensor 's'"},
      {"offsets past the data", safetensorsBytes(json{{"p", entry("F32", {8}, 0, 32)}}.dump(), data16), "tensor 'p'"},
      {"offsets reversed", safetensorsBytes(json{{"r", entry("F32", {1}, 8, 4)}}.dump(), data16), "tensor 'r'"},
      {"negative dimension", safetensorsBytes(json{{"n", entry("F32", {-1}, 0, 4)}}.dump(), data16), "tensor 'n'"},
      {"shape overflows",
       safetensorsBytes(json{{"o", entry("F32", {uint64_t{1} << 62, 16}, 0, 16)}}.dump(), data16), "tensor 'o'"},
      {"no data_offsets", safetensorsBytes(json{{"m", {{"dtype", "F32"}, {"shape", {1}}}}}.dump(), data16),
       "tensor 'm'"},
      {"duplicate tensor",
       safetensorsBytes(R"({"dup": {"dtype": "F32", "shape": [1], "data_offsets": [0, 4]},
                           "dup": {"dtype": "F32", "shape": [1], "data_offsets": [4, 8]}})",
                        data16),
       "tensor 'dup'"},
      {"metadata not strings", safetensorsBytes(R"({"__metadata__": {"epoch": 3}})", ""), "__metadata__"},
      {"pickle content", std::string("PK\x03\x04", 4) + std::string(64, '\0'), "arbitrary code"},
  };
}

TEST(Safetensors, CorruptFilesNameFileAndTensor) {
  TempDir dir;
  int i = 0;
  for (const Corruption& c : corruptions()) {
    std::string path = dir.write("corrupt" + std::to_string(i++) + ".safetensors", c.bytes);
    std::string msg = errorOf([&] { SafetensorsFile::open(path); });
    EXPECT_NE(msg.find(path), std::string::npos) << c.name << ": " << msg;
    EXPECT_NE(msg.find(c.mentions), std::string::npos) << c.name << ": " << msg;
  }
}

TEST(Safetensors, OverlapMessageNamesBothTensors) {
  TempDir dir;
  json header = {{"a", {{"dtype", "F32"}, {"shape", {3}}, {"data_offsets", {0, 12}}}},
                 {"b", {{"dtype", "F32"}, {"shape", {2}}, {"data_offsets", {8, 16}}}}};
  std::string path = dir.write("o.safetensors", safetensorsBytes(header.dump(), std::string(16, '\0')));
  std::string msg = errorOf([&] { SafetensorsFile::open(path); });
  EXPECT_NE(msg.find("'a'"), std::string::npos) << msg;
  EXPECT_NE(msg.find("'b'"), std::string::npos) << msg;
}

TEST(Safetensors, MissingFileNamesPath) {
  TempDir dir;
  std::string path = dir.file("absent.safetensors");
  std::string msg = errorOf([&] { SafetensorsFile::open(path); });
  EXPECT_NE(msg.find(path), std::string::npos) << msg;
}

TEST(UnsafeCheckpoint, PickleCheckpointsAreRefused) {
  TempDir dir;
  for (const char* name : {"model.ckpt", "model.PT", "weights.pth", "pytorch_model.bin"}) {
    std::string path = dir.write(name, "\x80\x02}q\x00.");
    EXPECT_TRUE(hasPickleCheckpointExtension(path)) << name;
    for (const std::string& msg :
         {errorOf([&] { refuseUnsafeCheckpoint(path); }), errorOf([&] { SafetensorsFile::open(path); })}) {
      EXPECT_NE(msg.find(path), std::string::npos) << msg;
      EXPECT_NE(msg.find("arbitrary code"), std::string::npos) << msg;
      EXPECT_NE(msg.find("safetensors"), std::string::npos) << msg;
    }
  }
  EXPECT_NO_THROW(refuseUnsafeCheckpoint("model.safetensors"));
  EXPECT_FALSE(hasPickleCheckpointExtension("model.safetensors"));
}

}  // namespace
}  // namespace sdgen::models
