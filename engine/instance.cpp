#include "engine/instance.h"

#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "engine/error.h"

namespace sdgen {

void ValidationSink::report(VkDebugUtilsMessageSeverityFlagBitsEXT severity, const char* message) {
  if (severity < VK_DEBUG_UTILS_MESSAGE_SEVERITY_WARNING_BIT_EXT) return;
  std::lock_guard lock(mutex_);
  for (auto& needle : suppressions_)
    if (std::strstr(message, needle.c_str())) {
      suppressed_++;
      return;
    }
  count_++;
  messages_.emplace_back(message);
  if (echo_) std::fprintf(stderr, "[vulkan validation] %s\n", message);
}

void ValidationSink::suppress(std::string needle) {
  std::lock_guard lock(mutex_);
  suppressions_.push_back(std::move(needle));
}

std::vector<std::string> ValidationSink::messages() const {
  std::lock_guard lock(mutex_);
  return messages_;
}

bool validationRequestedByEnvironment() {
  const char* v = std::getenv("SDGEN_VALIDATION");
  return v && *v && std::strcmp(v, "0") != 0;
}

static VKAPI_ATTR VkBool32 VKAPI_CALL debugCallback(VkDebugUtilsMessageSeverityFlagBitsEXT severity,
                                                    VkDebugUtilsMessageTypeFlagsEXT,
                                                    const VkDebugUtilsMessengerCallbackDataEXT* data,
                                                    void* user) {
  static_cast<ValidationSink*>(user)->report(severity, data->pMessage ? data->pMessage : "(no message)");
  return VK_FALSE;
}

// The layer's spec version, or 0 when it is not installed.
static uint32_t layerVersion(const char* name) {
  uint32_t n = 0;
  vkEnumerateInstanceLayerProperties(&n, nullptr);
  std::vector<VkLayerProperties> layers(n);
  vkEnumerateInstanceLayerProperties(&n, layers.data());
  for (auto& l : layers)
    if (std::strcmp(l.layerName, name) == 0) return l.specVersion;
  return 0;
}

Instance::Instance(const InstanceOptions& options) : validation_(options.validation) {
  const char* kValidationLayer = "VK_LAYER_KHRONOS_validation";
  if (validation_) layerVersion_ = layerVersion(kValidationLayer);
  if (validation_ && !layerVersion_)
    throw Error("validation was requested (SDGEN_VALIDATION) but VK_LAYER_KHRONOS_validation is not installed "
                "(Debian: vulkan-validationlayers)");

  VkApplicationInfo app{VK_STRUCTURE_TYPE_APPLICATION_INFO};
  app.pApplicationName = options.applicationName.c_str();
  app.pEngineName = "sdgen";
  app.apiVersion = VK_API_VERSION_1_3;

  std::vector<const char*> layers;
  std::vector<const char*> extensions;
  if (validation_) {
    layers.push_back(kValidationLayer);
    extensions.push_back(VK_EXT_DEBUG_UTILS_EXTENSION_NAME);
  }
  if (!options.extensions.empty()) {
    uint32_t n = 0;
    vkEnumerateInstanceExtensionProperties(nullptr, &n, nullptr);
    std::vector<VkExtensionProperties> available(n);
    vkEnumerateInstanceExtensionProperties(nullptr, &n, available.data());
    for (const auto& wanted : options.extensions) {
      bool found = false;
      for (const auto& a : available) found = found || wanted == a.extensionName;
      if (!found) throw Error("the Vulkan instance lacks extension " + wanted + " (needed to show a window)");
      extensions.push_back(wanted.c_str());
    }
  }

  VkDebugUtilsMessengerCreateInfoEXT messengerInfo{VK_STRUCTURE_TYPE_DEBUG_UTILS_MESSENGER_CREATE_INFO_EXT};
  messengerInfo.messageSeverity =
      VK_DEBUG_UTILS_MESSAGE_SEVERITY_WARNING_BIT_EXT | VK_DEBUG_UTILS_MESSAGE_SEVERITY_ERROR_BIT_EXT;
  messengerInfo.messageType = VK_DEBUG_UTILS_MESSAGE_TYPE_GENERAL_BIT_EXT |
                              VK_DEBUG_UTILS_MESSAGE_TYPE_VALIDATION_BIT_EXT |
                              VK_DEBUG_UTILS_MESSAGE_TYPE_PERFORMANCE_BIT_EXT;
  messengerInfo.pfnUserCallback = debugCallback;
  messengerInfo.pUserData = &sink_;

  VkInstanceCreateInfo info{VK_STRUCTURE_TYPE_INSTANCE_CREATE_INFO};
  info.pApplicationInfo = &app;
  info.enabledLayerCount = static_cast<uint32_t>(layers.size());
  info.ppEnabledLayerNames = layers.data();
  info.enabledExtensionCount = static_cast<uint32_t>(extensions.size());
  info.ppEnabledExtensionNames = extensions.data();
  if (validation_) info.pNext = &messengerInfo;  // also catches messages from vkCreateInstance itself
  VkResult r = vkCreateInstance(&info, nullptr, &instance_);
  if (r == VK_ERROR_INCOMPATIBLE_DRIVER)
    throw Error("no Vulkan 1.3 driver found (install mesa-vulkan-drivers for the CPU driver lavapipe)");
  vkCheck(r, "vkCreateInstance");

  if (validation_) {
    auto create = reinterpret_cast<PFN_vkCreateDebugUtilsMessengerEXT>(
        vkGetInstanceProcAddr(instance_, "vkCreateDebugUtilsMessengerEXT"));
    if (!create) throw Error("vkCreateDebugUtilsMessengerEXT is not available");
    vkCheck(create(instance_, &messengerInfo, nullptr, &messenger_), "vkCreateDebugUtilsMessengerEXT");
  }
}

Instance::~Instance() {
  if (messenger_) {
    auto destroy = reinterpret_cast<PFN_vkDestroyDebugUtilsMessengerEXT>(
        vkGetInstanceProcAddr(instance_, "vkDestroyDebugUtilsMessengerEXT"));
    if (destroy) destroy(instance_, messenger_, nullptr);
  }
  if (instance_) vkDestroyInstance(instance_, nullptr);
}

std::vector<VkPhysicalDevice> Instance::physicalDevices() const {
  uint32_t n = 0;
  vkCheck(vkEnumeratePhysicalDevices(instance_, &n, nullptr), "vkEnumeratePhysicalDevices");
  std::vector<VkPhysicalDevice> devices(n);
  vkCheck(vkEnumeratePhysicalDevices(instance_, &n, devices.data()), "vkEnumeratePhysicalDevices");
  return devices;
}

}  // namespace sdgen
