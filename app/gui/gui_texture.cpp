#include "app/gui/gui_texture.h"

#include <cstring>
#include <string>

#include "app/gui/imgui_vulkan_backend.h"
#include "engine/error.h"

namespace sdgen::gui {

TextureRenderer::TextureRenderer(SwapchainRenderer& renderer) : renderer_(renderer) {
  VkDescriptorPoolSize size{VK_DESCRIPTOR_TYPE_COMBINED_IMAGE_SAMPLER, 1024};
  VkDescriptorPoolCreateInfo info{VK_STRUCTURE_TYPE_DESCRIPTOR_POOL_CREATE_INFO};
  info.flags = VK_DESCRIPTOR_POOL_CREATE_FREE_DESCRIPTOR_SET_BIT;
  info.maxSets = 1024;
  info.poolSizeCount = 1;
  info.pPoolSizes = &size;
  vkCheck(vkCreateDescriptorPool(renderer.device(), &info, nullptr, &pool_), "vkCreateDescriptorPool");
}

TextureRenderer::~TextureRenderer() { vkDestroyDescriptorPool(renderer_.device(), pool_, nullptr); }

GuiTexture::GuiTexture(TextureRenderer& textures, int width, int height)
    : textures_(textures), width_(width), height_(height) {
  if (width <= 0 || height <= 0)
    throw Error("cannot show a " + std::to_string(width) + "x" + std::to_string(height) + " image");
  VkDevice device = textures.renderer().device();
  try {
    VkImageCreateInfo ii{VK_STRUCTURE_TYPE_IMAGE_CREATE_INFO};
    ii.imageType = VK_IMAGE_TYPE_2D;
    ii.format = VK_FORMAT_R8G8B8A8_UNORM;
    ii.extent = {uint32_t(width), uint32_t(height), 1};
    ii.mipLevels = 1;
    ii.arrayLayers = 1;
    ii.samples = VK_SAMPLE_COUNT_1_BIT;
    ii.tiling = VK_IMAGE_TILING_OPTIMAL;
    ii.usage = VK_IMAGE_USAGE_SAMPLED_BIT | VK_IMAGE_USAGE_TRANSFER_DST_BIT;
    ii.initialLayout = VK_IMAGE_LAYOUT_UNDEFINED;
    vkCheck(vkCreateImage(device, &ii, nullptr, &image_), "vkCreateImage (GUI texture)");
    VkMemoryRequirements req;
    vkGetImageMemoryRequirements(device, image_, &req);
    VkMemoryAllocateInfo ai{VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO};
    ai.allocationSize = req.size;
    ai.memoryTypeIndex = textures.renderer().memoryType(req.memoryTypeBits, VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT);
    vkCheck(vkAllocateMemory(device, &ai, nullptr, &memory_), "vkAllocateMemory (GUI texture)");
    vkCheck(vkBindImageMemory(device, image_, memory_, 0), "vkBindImageMemory (GUI texture)");
    VkImageViewCreateInfo vi{VK_STRUCTURE_TYPE_IMAGE_VIEW_CREATE_INFO};
    vi.image = image_;
    vi.viewType = VK_IMAGE_VIEW_TYPE_2D;
    vi.format = VK_FORMAT_R8G8B8A8_UNORM;
    vi.subresourceRange = {VK_IMAGE_ASPECT_COLOR_BIT, 0, 1, 0, 1};
    vkCheck(vkCreateImageView(device, &vi, nullptr, &view_), "vkCreateImageView (GUI texture)");

    VkDescriptorSetLayout layout = imguiTextureSetLayout();
    if (!layout) throw Error("GUI texture created before Dear ImGui's Vulkan backend");
    VkDescriptorSetAllocateInfo si{VK_STRUCTURE_TYPE_DESCRIPTOR_SET_ALLOCATE_INFO};
    si.descriptorPool = textures.pool();
    si.descriptorSetCount = 1;
    si.pSetLayouts = &layout;
    vkCheck(vkAllocateDescriptorSets(device, &si, &set_), "vkAllocateDescriptorSets (GUI texture)");
    VkDescriptorImageInfo image{VK_NULL_HANDLE, view_, VK_IMAGE_LAYOUT_SHADER_READ_ONLY_OPTIMAL};  // immutable sampler
    VkWriteDescriptorSet write{VK_STRUCTURE_TYPE_WRITE_DESCRIPTOR_SET};
    write.dstSet = set_;
    write.descriptorCount = 1;
    write.descriptorType = VK_DESCRIPTOR_TYPE_COMBINED_IMAGE_SAMPLER;
    write.pImageInfo = &image;
    vkUpdateDescriptorSets(device, 1, &write, 0, nullptr);
  } catch (...) {
    if (set_) vkFreeDescriptorSets(device, textures.pool(), 1, &set_);
    if (view_) vkDestroyImageView(device, view_, nullptr);
    if (image_) vkDestroyImage(device, image_, nullptr);
    if (memory_) vkFreeMemory(device, memory_, nullptr);
    throw;
  }
}

GuiTexture::~GuiTexture() {
  VkDevice device = textures_.renderer().device();
  VkDescriptorPool pool = textures_.pool();
  textures_.renderer().retire([=, set = set_, view = view_, image = image_, memory = memory_]() mutable {
    vkFreeDescriptorSets(device, pool, 1, &set);
    vkDestroyImageView(device, view, nullptr);
    vkDestroyImage(device, image, nullptr);
    vkFreeMemory(device, memory, nullptr);
  });
}

void GuiTexture::upload(VkCommandBuffer commands, std::span<const uint8_t> rgb) {
  const size_t pixels = size_t(width_) * height_;
  if (rgb.size() != pixels * 3)
    throw Error("GUI texture upload: " + std::to_string(rgb.size()) + " bytes for a " + std::to_string(width_) + "x" +
                std::to_string(height_) + " RGB image");
  SwapchainRenderer& renderer = textures_.renderer();
  VkDevice device = renderer.device();
  VkBuffer staging = VK_NULL_HANDLE;
  VkDeviceMemory stagingMemory = VK_NULL_HANDLE;
  VkBufferCreateInfo bi{VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO};
  bi.size = pixels * 4;
  bi.usage = VK_BUFFER_USAGE_TRANSFER_SRC_BIT;
  vkCheck(vkCreateBuffer(device, &bi, nullptr, &staging), "vkCreateBuffer (GUI texture staging)");
  VkMemoryRequirements req;
  vkGetBufferMemoryRequirements(device, staging, &req);
  VkMemoryAllocateInfo ai{VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO};
  ai.allocationSize = req.size;
  ai.memoryTypeIndex =
      renderer.memoryType(req.memoryTypeBits, VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT | VK_MEMORY_PROPERTY_HOST_COHERENT_BIT);
  VkResult r = vkAllocateMemory(device, &ai, nullptr, &stagingMemory);
  if (r != VK_SUCCESS) vkDestroyBuffer(device, staging, nullptr);
  vkCheck(r, "vkAllocateMemory (GUI texture staging)");
  // Retired right away: destroyed once the frame recording this upload has finished.
  renderer.retire([device, staging, stagingMemory] {
    vkDestroyBuffer(device, staging, nullptr);
    vkFreeMemory(device, stagingMemory, nullptr);
  });
  vkCheck(vkBindBufferMemory(device, staging, stagingMemory, 0), "vkBindBufferMemory (GUI texture staging)");
  void* mapped = nullptr;
  vkCheck(vkMapMemory(device, stagingMemory, 0, bi.size, 0, &mapped), "vkMapMemory (GUI texture staging)");
  auto* dst = static_cast<uint8_t*>(mapped);
  for (size_t i = 0; i < pixels; ++i) {
    dst[i * 4 + 0] = rgb[i * 3 + 0];
    dst[i * 4 + 1] = rgb[i * 3 + 1];
    dst[i * 4 + 2] = rgb[i * 3 + 2];
    dst[i * 4 + 3] = 255;
  }
  vkUnmapMemory(device, stagingMemory);

  // Earlier frames may still sample the image: the barrier orders this copy after their fragment shaders.
  VkImageMemoryBarrier toCopy{VK_STRUCTURE_TYPE_IMAGE_MEMORY_BARRIER};
  toCopy.srcAccessMask = 0;
  toCopy.dstAccessMask = VK_ACCESS_TRANSFER_WRITE_BIT;
  toCopy.oldLayout = VK_IMAGE_LAYOUT_UNDEFINED;  // every upload replaces the whole image
  toCopy.newLayout = VK_IMAGE_LAYOUT_TRANSFER_DST_OPTIMAL;
  toCopy.srcQueueFamilyIndex = toCopy.dstQueueFamilyIndex = VK_QUEUE_FAMILY_IGNORED;
  toCopy.image = image_;
  toCopy.subresourceRange = {VK_IMAGE_ASPECT_COLOR_BIT, 0, 1, 0, 1};
  vkCmdPipelineBarrier(commands, VK_PIPELINE_STAGE_FRAGMENT_SHADER_BIT, VK_PIPELINE_STAGE_TRANSFER_BIT, 0, 0, nullptr,
                       0, nullptr, 1, &toCopy);
  VkBufferImageCopy region{};
  region.imageSubresource = {VK_IMAGE_ASPECT_COLOR_BIT, 0, 0, 1};
  region.imageExtent = {uint32_t(width_), uint32_t(height_), 1};
  vkCmdCopyBufferToImage(commands, staging, image_, VK_IMAGE_LAYOUT_TRANSFER_DST_OPTIMAL, 1, &region);
  VkImageMemoryBarrier toRead = toCopy;
  toRead.srcAccessMask = VK_ACCESS_TRANSFER_WRITE_BIT;
  toRead.dstAccessMask = VK_ACCESS_SHADER_READ_BIT;
  toRead.oldLayout = VK_IMAGE_LAYOUT_TRANSFER_DST_OPTIMAL;
  toRead.newLayout = VK_IMAGE_LAYOUT_SHADER_READ_ONLY_OPTIMAL;
  vkCmdPipelineBarrier(commands, VK_PIPELINE_STAGE_TRANSFER_BIT, VK_PIPELINE_STAGE_FRAGMENT_SHADER_BIT, 0, 0, nullptr,
                       0, nullptr, 1, &toRead);
  uploaded_ = true;
}

void GuiTexture::bindCallback(const ImDrawList*, const ImDrawCmd* cmd) {
  auto* self = static_cast<GuiTexture*>(cmd->UserCallbackData);
  vkCmdBindDescriptorSets(self->textures_.frameCommands(), VK_PIPELINE_BIND_POINT_GRAPHICS, imguiPipelineLayout(), 0, 1,
                          &self->set_, 0, nullptr);
}

void GuiTexture::draw(ImVec2 size) {
  if (!uploaded_) {
    ImGui::Dummy(size);
    return;
  }
  ImDrawList* list = ImGui::GetWindowDrawList();
  list->AddCallback(&GuiTexture::bindCallback, this);
  // The texture id only has to differ from the font atlas's so that ImGui gives the image its own draw command.
  ImGui::Image(reinterpret_cast<ImTextureID>(this), size);
  list->AddCallback(ImDrawCallback_ResetRenderState, nullptr);  // the backend rebinds the font's set
}

}  // namespace sdgen::gui
