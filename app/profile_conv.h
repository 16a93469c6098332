#pragma once
// `sdgen --profile-conv`: one UNet step (batch 2: the classifier-free-guidance layout, random latents and text
// context, timestep 500), one VAE decode and one text encoding (batch 2) of the model, recorded as in generation
// (same network builders, same fused launches) with a GPU timestamp after every command. Reports every conv layer
// (its problem, the algorithm and tile chosen, the time, FLOPs and bytes of each kernel of its pipeline), every
// other launch (node, kernel, time) and the time and launches by op type.
#include <cstdio>
#include <map>
#include <string>
#include <vector>

#include "app/cli_options.h"
#include "engine/context.h"
#include "engine/dtype.h"
#include "ops/conv2d_tune.h"

namespace sdgen::app {

struct ProfiledKernel {
  std::string label;  // the dispatch label
  std::string role;   // "gemm", "input transform", "output transform"
  double ms = 0, flops = 0, bytes = 0;
};

struct ProfiledConv {
  std::string layer;    // the conv's label in the network ("down 0 resnet 1 conv1")
  std::string problem;  // "[N,H,W,Cin] -> [N,Ho,Wo,Cout] 3x3 s1 p1 d1"
  std::string weights;  // the weight tensor's name
  std::string algo, tile;
  std::string candidate;   // the autotune's candidate name ("coop 64x64 split 4"); empty when the rule chose
  std::string selectedBy;  // "tuner" (measured by this run), "cache" (by an earlier run) or "rule"
  std::vector<ProfiledKernel> kernels;
  double ms = 0;           // sum of the kernels
  double directFlops = 0;  // 2*N*Ho*Wo*Cout*Cin*kh*kw: the basis of tflops
  double bytes = 0;        // minimum traffic of all kernels
  double tflops = 0, gbps = 0;
};

// The op types of the totals.
inline const std::vector<std::string>& profileOpTypes() {
  static const std::vector<std::string> types = {"conv", "linear", "attention", "norm", "other"};
  return types;
}

// A command of a non-conv node (linear, attention, norm, other), for finding where the rest of the time goes.
struct ProfiledLaunch {
  std::string node;   // the node's label ("down 1 attention 0 transformer 0 ff")
  std::string type;   // one of profileOpTypes()
  std::string label;  // the command's label (the kernel and its tile)
  double ms = 0;
};

struct ProfiledGraph {
  std::string name;  // "unet step", "vae decode", "text encoder"
  std::string input;
  double totalMs = 0;         // every command's GPU time
  size_t launches = 0;        // dispatches recorded (CompiledGraph::launches)
  size_t commands = 0;        // timed commands (dispatches, copies, fills)
  std::map<std::string, double> msByType;
  std::map<std::string, size_t> commandsByType;
  std::vector<ProfiledConv> convs;
  std::vector<ProfiledLaunch> others;  // every command of the non-conv nodes, in recording order
};

struct ProfileReport {
  std::string device, model;
  DType precision = DType::F32;
  int width = 0, height = 0;
  bool timestamps = true;
  ops::ConvTuneStats autotune;  // what the convolution autotune did while the graphs were recorded
  std::string autotuneCache;    // its cache file
  std::vector<std::string> autotuneDropped;  // ConvTuner::droppedCandidates
  std::vector<ProfiledGraph> graphs;
};

struct ProfileSettings {
  std::string modelPath;  // resolved
  DType precision = DType::F32;
  int width = 0, height = 0;  // 0: the model's default
  ops::ConvTuneSettings autotune;
};

ProfileReport profileConv(Context& ctx, const ProfileSettings& settings);
std::string formatProfile(const ProfileReport& report);
std::string profileJson(const ProfileReport& report);

// The mode: resolves the model (built-in by default) and precision, runs, prints, writes --json.
int runProfileConv(const CliOptions& options, std::FILE* out, std::FILE* err);

}  // namespace sdgen::app
