// libFuzzer target: sdgen serve's request bodies (cpp-httplib parses HTTP itself; what sdgen parses is the JSON
// body): the bounded JSON parser (json_body.h), then POST /sdapi/v1/txt2img's and img2img's validation against
// the built-in model (base64 init images and masks included), with small limits so inputs stay fast.
// The first byte picks the endpoint. A bad body must be a ValidationFailed (HTTP 422) or sdgen::Error.
#include <cstdint>

#include "app/serve/img2img_request.h"
#include "app/serve/json_body.h"
#include "app/serve/model_registry.h"
#include "app/serve/txt2img_request.h"
#include "app/serve/validation_error.h"
#include "engine/error.h"
#include "fuzz/fuzz_support.h"

namespace {
// Made once, in LLVMFuzzerInitialize, so that it does not count against the first input's time limit.
const sdgen::serve::ModelRegistry& registry() {
  static const sdgen::serve::ModelRegistry r("", "");
  return r;
}
}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  (void)registry();
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace sdgen;
  const serve::ModelRegistry& models = registry();
  if (size == 0) return 0;
  serve::RequestLimits limits;
  limits.maxPixels = 256 * 256;
  try {
    const nlohmann::json body = serve::parseJsonBody(fuzz::asText(data + 1, size - 1));
    serve::ImageRequest r = data[0] & 1 ? serve::parseImg2ImgRequest(body, models, limits, 1)
                                        : serve::parseTxt2ImgRequest(body, models, limits, 1);
    if (r.images() < 1 || r.images() > serve::RequestLimits::kMaxImagesPerRequest ||
        int64_t(r.width) * r.height > limits.maxPixels)
      __builtin_trap();
    (void)serve::dumpJson(serve::requestParameters(r));
  } catch (const serve::ValidationFailed&) {
  } catch (const Error&) {
  }
  return 0;
}
