// sdgen-gui: the generation engine behind a Dear ImGui window (see docs/gui.md).
#define GLFW_INCLUDE_VULKAN
#include <GLFW/glfw3.h>
#include <imgui.h>
#include <imgui_impl_glfw.h>

#include <cstdio>
#include <memory>
#include <string>

#include "app/cli_options.h"
#include "app/gui/gui_app.h"
#include "app/gui/gui_options.h"
#include "app/gui/gui_session.h"

namespace {

constexpr int kExitRuntimeError = 1, kExitUsageError = 2;
constexpr int kMaxSessionRestarts = 3;

void glfwError(int code, const char* message) { std::fprintf(stderr, "sdgen-gui: GLFW error %d: %s\n", code, message); }

// GLFW and the window, torn down in reverse.
struct GlfwWindow {
  GLFWwindow* window = nullptr;
  GlfwWindow(int width, int height) {
    if (!glfwInit()) throw sdgen::Error("cannot start GLFW (no display? run under xvfb-run for a virtual one)");
    if (!glfwVulkanSupported()) {
      glfwTerminate();
      throw sdgen::Error("GLFW finds no Vulkan loader with window-system support");
    }
    glfwWindowHint(GLFW_CLIENT_API, GLFW_NO_API);
    window = glfwCreateWindow(width, height, "sdgen", nullptr, nullptr);
    if (!window) {
      glfwTerminate();
      throw sdgen::Error("cannot create the window");
    }
  }
  ~GlfwWindow() {
    glfwDestroyWindow(window);
    glfwTerminate();
  }
};

// Dear ImGui's context and its GLFW backend: they outlive device sessions.
struct ImGuiContextScope {
  explicit ImGuiContextScope(GLFWwindow* window) {
    IMGUI_CHECKVERSION();
    ImGui::CreateContext();
    ImGuiIO& io = ImGui::GetIO();
    io.IniFilename = nullptr;  // no imgui.ini in the working directory
    io.ConfigFlags |= ImGuiConfigFlags_NavEnableKeyboard;
    ImGui::StyleColorsDark();
    ImGui::GetStyle().FrameRounding = 3.f;
    ImGui_ImplGlfw_InitForVulkan(window, true);
  }
  ~ImGuiContextScope() {
    ImGui_ImplGlfw_Shutdown();
    ImGui::DestroyContext();
  }
};

}  // namespace

int main(int argc, char** argv) {
  sdgen::gui::GuiOptions options;
  try {
    options = sdgen::gui::parseGuiCommandLine(std::vector<std::string>(argv + 1, argv + argc));
  } catch (const sdgen::app::UsageError& e) {
    std::fprintf(stderr, "sdgen-gui: %s\nTry 'sdgen-gui --help' for the list of options.\n", e.what());
    return kExitUsageError;
  }
  if (options.help) {
    std::fputs(sdgen::gui::guiUsageText().c_str(), stdout);
    return 0;
  }
  if (options.version) {
    std::printf("sdgen-gui %s\n", SDGEN_VERSION);
    return 0;
  }
  try {
    glfwSetErrorCallback(glfwError);
    GlfwWindow window(options.windowWidth, options.windowHeight);
    ImGuiContextScope imgui(window.window);
    sdgen::gui::GuiApp app(options);
    glfwSetWindowUserPointer(window.window, &app);
    glfwSetDropCallback(window.window, [](GLFWwindow* w, int count, const char** paths) {
      if (count > 0) static_cast<sdgen::gui::GuiApp*>(glfwGetWindowUserPointer(w))->onFileDropped(paths[0]);
    });
    for (int restarts = 0;; ++restarts) {
      try {
        sdgen::gui::GuiSession session(window.window, options);
        session.run(app);
        return app.exitCode();
      } catch (const sdgen::Error& e) {
        // The device failed under the window (lost device, swapchain error): start over on a fresh Context.
        if (restarts >= kMaxSessionRestarts) throw;
        app.addMessage(sdgen::gui::Message::Kind::Error,
                       std::string("the GPU session failed and was restarted: ") + e.what());
      }
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "sdgen-gui: error: %s\n", e.what());
    return kExitRuntimeError;
  }
}
