#include "models/json_bounds.h"

#include "engine/error.h"

namespace sdgen::models {

namespace {
struct TooDeep {};
}  // namespace

nlohmann::json parseJsonBounded(std::string_view text, const std::string& what,
                                const nlohmann::json::parser_callback_t& onEvent, int maxDepth) {
  using json = nlohmann::json;
  // The callback sees the depth of every value as it is read; a throw from it ends the parse at once, before
  // anything deeper is built.
  auto limit = [&](int depth, json::parse_event_t event, json& parsed) {
    if (depth >= maxDepth && (event == json::parse_event_t::object_start || event == json::parse_event_t::array_start))
      throw TooDeep{};
    return onEvent ? onEvent(depth, event, parsed) : true;
  };
  try {
    return json::parse(text.begin(), text.end(), limit);
  } catch (const TooDeep&) {
    throw Error(what + " nests JSON deeper than " + std::to_string(maxDepth) + " levels");
  }
}

}  // namespace sdgen::models
