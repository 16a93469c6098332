// Preloaded into the ASan test runs (tests/CMakeLists.txt adds it to LD_PRELOAD in a -fsanitize=address build):
// the Vulkan loader dlclose()s the driver (Mesa's lavapipe) and the validation layer at vkDestroyInstance, and
// memory those libraries still reach from their globals then looks leaked to LeakSanitizer, which reports at
// exit, as "<unknown module>" (128 bytes from lavapipe on every run that creates a device). Keeping every library
// loaded keeps that memory reachable, so no suppression is needed and a real leak still names its library.
// Built without sanitizers, so preloading it into the shells and tools the tests run is harmless.
extern "C" int dlclose(void* handle) {
  (void)handle;
  return 0;
}
