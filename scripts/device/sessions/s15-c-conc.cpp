// Session 15, call C: in-process Slang compiles on N threads (argv[1]) of the kernels named after it, each
// checked against slangc's SPIR-V beside it (<kernel>.slangc.spv). Built by hand:
//   g++ -O1 -std=c++20 s15-c-conc.cpp -o conc -ldl -lpthread; SLANGLIB=<libslang-compiler> SHADERS=shaders ./conc 16 *.slang
#include <dlfcn.h>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>
#include <thread>
#include <fstream>
#include <atomic>
struct Blob { virtual int QI(const void*, void**)=0; virtual unsigned AddRef()=0; virtual unsigned Release()=0;
  virtual const void* getBufferPointer()=0; virtual size_t getBufferSize()=0; };
int main(int argc, char** argv) {
  setvbuf(stdout, nullptr, _IONBF, 0);
  void* lib = dlopen(getenv("SLANGLIB"), RTLD_NOW | RTLD_LOCAL);
  auto cs = (void* (*)(const char*))dlsym(lib, "spCreateSession");
  auto cr = (void* (*)(void*))dlsym(lib, "spCreateCompileRequest");
  auto pa = (int (*)(void*, const char* const*, int))dlsym(lib, "spProcessCommandLineArguments");
  auto co = (int (*)(void*))dlsym(lib, "spCompile");
  auto dr = (void (*)(void*))dlsym(lib, "spDestroyCompileRequest");
  auto ds = (void (*)(void*))dlsym(lib, "spDestroySession");
  auto tb = (int (*)(void*, int, Blob**))dlsym(lib, "spGetTargetCodeBlob");
  auto bt = (const char* (*)())dlsym(lib, "spGetBuildTagString");
  printf("tag [%s]\n", bt());
  int threads = atoi(argv[1]);
  std::atomic<int> next{2}, bad{0};
  auto t0 = std::chrono::steady_clock::now();
  std::vector<std::thread> ts;
  for (int t = 0; t < threads; ++t) ts.emplace_back([&] {
    void* s = cs(nullptr);
    for (int i; (i = next++) < argc;) {
      void* r = cr(s);
      std::vector<const char*> args = {argv[i], "-entry", "main", "-I", getenv("SHADERS"), "-target", "spirv", "-stage", "compute",
        "-fvk-use-scalar-layout", "-matrix-layout-row-major", "-O0"};
      pa(r, args.data(), (int)args.size()); int rc = co(r);
      Blob* b = nullptr; tb(r, 0, &b);
      std::string ref = std::string(argv[i]) + ".slangc.spv";
      std::ifstream in(ref, std::ios::binary); std::string want((std::istreambuf_iterator<char>(in)), {});
      if (rc || !b || want.size() != b->getBufferSize() || memcmp(want.data(), b->getBufferPointer(), want.size())) { bad++; printf("DIFF %s\n", argv[i]); }
      if (b) b->Release();
      dr(r);
    }
    ds(s);
  });
  for (auto& t : ts) t.join();
  printf("%d threads, %d kernels, %.2f s, bad %d\n", threads, argc - 2, std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(), bad.load());
}
