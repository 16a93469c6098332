#include "app/serve/json_body.h"

#include <string>

namespace sdgen::serve {

namespace {
struct TooDeep {
  size_t offset;
};
}  // namespace

nlohmann::json parseJsonBody(std::string_view body, int maxDepth) {
  if (body.find_first_not_of(" \t\r\n") == std::string_view::npos) return nlohmann::json::object();
  // The callback sees the depth of every value as it is read; a throw from it ends the parse at once.
  auto limitDepth = [maxDepth](int depth, nlohmann::json::parse_event_t event, nlohmann::json&) {
    if (depth > maxDepth &&
        (event == nlohmann::json::parse_event_t::object_start || event == nlohmann::json::parse_event_t::array_start))
      throw TooDeep{0};
    return true;
  };
  try {
    return nlohmann::json::parse(body.begin(), body.end(), limitDepth);
  } catch (const TooDeep&) {
    FieldError e{{"body"}, "JSON nested deeper than " + std::to_string(maxDepth) + " levels", "json_invalid",
                 nullptr, {{"max_depth", maxDepth}}};
    throw ValidationFailed({e});
  } catch (const nlohmann::json::parse_error& pe) {
    // nlohmann's message quotes the last token read, which may be long: shorten it.
    FieldError e{{"body", pe.byte}, "JSON decode error: " + shorten(pe.what(), 200), "json_invalid", nullptr, nullptr};
    throw ValidationFailed({e});
  } catch (const nlohmann::json::exception& je) {
    // Finding 3 of issue 24 (docs/reliability.md): a number beyond double's range ({"width": 1e400}) is an
    // out_of_range, not a parse_error, and escaped as an unexpected exception type.
    FieldError e{{"body"}, "JSON decode error: " + shorten(je.what(), 200), "json_invalid", nullptr, nullptr};
    throw ValidationFailed({e});
  }
}

std::string dumpJson(const nlohmann::json& j) {
  return j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

}  // namespace sdgen::serve
