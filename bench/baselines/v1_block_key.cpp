// v1_block_key in C++ (docs/trtllm-wire.md section 1.2), compiled with g++ -O2 at bench time: the practical speed limit
// for the TypeScript hasher. Same modes and output as v1_block_key.py.
#include <chrono>
#include <ctime>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

namespace {

constexpr uint64_t K1 = 0xBF58476D1CE4E5B9ULL;
constexpr uint64_t K2 = 0x94D049BB133111EBULL;
constexpr uint32_t C32 = 0x045D9F3BU;
constexpr uint32_t G = 0x9E3779B9U;

inline uint64_t mix32(uint32_t v, uint64_t seed) {
  v = ((v >> 16) ^ v) * C32;
  v = ((v >> 16) ^ v) * C32;
  v = (v >> 16) ^ v;
  v = v + G;  // 32-bit wrap before widening
  return seed ^ (static_cast<uint64_t>(v) + (seed << 6) + (seed >> 2));
}

inline uint64_t mix64(uint64_t v, uint64_t seed) {
  v = (v ^ (v >> 30)) * K1;
  v = (v ^ (v >> 27)) * K2;
  v = v ^ (v >> 31);
  return seed ^ (v + G + (seed << 6) + (seed >> 2));
}

uint64_t hashBlock(const uint32_t* tokens, size_t n, uint64_t parent, bool hasSalt, uint64_t salt, bool hasLora,
                   uint64_t lora) {
  uint64_t seed = static_cast<uint64_t>(n) ^ (parent * K1);
  if (parent == 0 && hasSalt) seed = mix64(salt, seed);
  for (size_t i = 0; i < n; ++i) seed = mix32(tokens[i], seed);
  if (hasLora) seed = mix64(lora, seed);
  return seed;
}

int check() {
  std::string line;
  while (std::getline(std::cin, line)) {
    if (line.empty()) continue;
    std::istringstream in(line);
    std::string salt, lora, parent, toks;
    in >> salt >> lora >> parent >> toks;
    std::vector<uint32_t> tokens;
    if (toks != "-") {
      std::stringstream ts(toks);
      std::string t;
      while (std::getline(ts, t, ',')) tokens.push_back(static_cast<uint32_t>(std::stoull(t)));
    }
    uint64_t h = hashBlock(tokens.data(), tokens.size(), std::stoull(parent), salt != "-",
                           salt == "-" ? 0 : std::stoull(salt), lora != "-", lora == "-" ? 0 : std::stoull(lora));
    std::printf("%llu\n", static_cast<unsigned long long>(h));
  }
  return 0;
}

int bench(int argc, char** argv) {
  size_t count = 0, block = 0, reps = 0;
  uint32_t seed = 0;
  for (int i = 0; i + 1 < argc; i += 2) {
    if (!std::strcmp(argv[i], "--tokens")) count = std::strtoull(argv[i + 1], nullptr, 10);
    if (!std::strcmp(argv[i], "--block")) block = std::strtoull(argv[i + 1], nullptr, 10);
    if (!std::strcmp(argv[i], "--reps")) reps = std::strtoull(argv[i + 1], nullptr, 10);
    if (!std::strcmp(argv[i], "--seed")) seed = static_cast<uint32_t>(std::strtoull(argv[i + 1], nullptr, 10));
  }
  std::vector<uint32_t> tokens(count);
  uint32_t x = seed;
  for (size_t i = 0; i < count; ++i) {
    x = x * 1664525U + 1013904223U;
    tokens[i] = x >> 15;
  }
  std::vector<double> wall, cpu;
  uint64_t xr = 0, last = 0;
  for (size_t r = 0; r < reps; ++r) {
    timespec cpuStart{};
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &cpuStart);
    auto start = std::chrono::steady_clock::now();
    uint64_t parent = 0;
    xr = 0;
    for (size_t b = 0; b < count; b += block) {
      size_t n = count - b < block ? count - b : block;
      parent = hashBlock(tokens.data() + b, n, parent, false, 0, false, 0);
      xr ^= parent;
    }
    last = parent;
    wall.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
    timespec cpuEnd{};
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &cpuEnd);
    cpu.push_back(static_cast<double>(cpuEnd.tv_sec - cpuStart.tv_sec) + (cpuEnd.tv_nsec - cpuStart.tv_nsec) / 1e9);
  }
  std::printf("{\"tokens\":%zu,\"seconds\":[", count);
  for (size_t r = 0; r < wall.size(); ++r) std::printf(r == 0 ? "%.9f" : ",%.9f", wall[r]);
  std::printf("],\"cpuSeconds\":[");
  for (size_t r = 0; r < cpu.size(); ++r) std::printf(r == 0 ? "%.9f" : ",%.9f", cpu[r]);
  std::printf("],\"xor\":\"%llu\",\"last\":\"%llu\"}\n", static_cast<unsigned long long>(xr),
              static_cast<unsigned long long>(last));
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc >= 2 && !std::strcmp(argv[1], "check")) return check();
  if (argc >= 2 && !std::strcmp(argv[1], "bench")) return bench(argc - 2, argv + 2);
  std::fprintf(stderr, "usage: v1_block_key check|bench ...\n");
  return 2;
}
