// The generator's catalogues: formatting helpers, the image catalogue's
// digests, instance type draws and the kubelet's cpu reserve.
#include "bench/generator/catalogue.hpp"

#include <algorithm>
#include <cstdio>

#include "host/common.hpp"

namespace bulkscore::gen {

std::string format_time(int64_t t) {
  int64_t z = t / 86400;
  const int64_t secs = t - z * 86400;
  z += 719468;
  const int64_t era = z / 146097;
  const int64_t doe = z - era * 146097;
  const int64_t yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
  const int64_t doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
  const int64_t mp = (5 * doy + 2) / 153;
  const int64_t d = doy - (153 * mp + 2) / 5 + 1;
  const int64_t m = mp + (mp < 10 ? 3 : -9);
  const int64_t y = yoe + era * 400 + (m <= 2 ? 1 : 0);
  char buf[32];
  // NOLINTNEXTLINE(cert-err33-c): generated dates, 20 characters into 32
  std::snprintf(buf, sizeof buf, "%04d-%02d-%02dT%02d:%02d:%02dZ", static_cast<int>(y), static_cast<int>(m),
                static_cast<int>(d), static_cast<int>(secs / 3600), static_cast<int>(secs / 60 % 60),
                static_cast<int>(secs % 60));
  return buf;
}

void append_hex(std::string& out, uint64_t v, int digits) {
  for (int i = digits - 1; i >= 0; --i) out += kHex[(v >> (4 * i)) & 15];
}

std::string make_uid(SplitMix64& rng) {
  const uint64_t a = rng.next();
  const uint64_t b = rng.next();
  std::string s;
  s.reserve(36);
  append_hex(s, a >> 32, 8);
  s += '-';
  append_hex(s, (a >> 16) & 0xffff, 4);
  s += '-';
  append_hex(s, 0x4000 | (a & 0x0fff), 4);
  s += '-';
  append_hex(s, 0x8000 | ((b >> 48) & 0x3fff), 4);
  s += '-';
  append_hex(s, b & 0xffffffffffffULL, 12);
  return s;
}

std::string hex_string(SplitMix64& rng, int digits) {
  std::string s;
  s.reserve(digits);
  while (digits > 0) {
    const int n = std::min(digits, 16);
    append_hex(s, rng.next(), n);
    digits -= n;
  }
  return s;
}

std::string name_token(SplitMix64& rng, int n) {
  std::string s(n, ' ');
  for (char& ch : s) ch = kNameAlphabet[rng.below(27)];
  return s;
}

std::string name_suffix(uint64_t ordinal, uint64_t salt) {
  if (ordinal >= kSuffixSpace) throw Error("generator: too many replicas in one workload");
  uint64_t x = (ordinal * 7777777 + salt % kSuffixSpace) % kSuffixSpace;
  std::string s(5, ' ');
  for (int i = 4; i >= 0; --i) {
    s[i] = kNameAlphabet[x % 27];
    x /= 27;
  }
  return s;
}

std::string dotted_ip(uint32_t v) {
  return std::to_string(v >> 24) + '.' + std::to_string((v >> 16) & 255) + '.' + std::to_string((v >> 8) & 255) + '.' +
         std::to_string(v & 255);
}

std::string fmt_cpu(int64_t milli) {
  if (milli % 1000 == 0) return std::to_string(milli / 1000);
  return std::to_string(milli) + "m";
}

std::string fmt_bytes(int64_t b) {
  if (b != 0 && b % kGi == 0) return std::to_string(b / kGi) + "Gi";
  if (b != 0 && b % kMi == 0) return std::to_string(b / kMi) + "Mi";
  if (b != 0 && b % kKi == 0) return std::to_string(b / kKi) + "Ki";
  return std::to_string(b);
}

// Memory as people write it: 64Mi steps up to 1Gi, then 256Mi steps.
int64_t round_mem_mi(int64_t mi) {
  if (mi <= 64) return 64 * kMi;
  if (mi <= 1024) return (mi + 63) / 64 * 64 * kMi;
  return (mi + 255) / 256 * 256 * kMi;
}

uint64_t fnv1a(std::string_view s) {
  uint64_t h = 0xcbf29ce484222325ULL;
  for (unsigned char ch : s) h = (h ^ ch) * 0x100000001b3ULL;
  return h;
}

// The catalogue does not depend on the seed: digests are a hash of the name.
std::vector<Image> build_images() {
  std::vector<Image> out;
  out.reserve(kImageCount);
  for (const ImageDef& d : kImageDefs) {
    Image im;
    im.tag_name = d.repo_tag;
    const std::string_view rt(d.repo_tag);
    SplitMix64 h(fnv1a(rt));
    im.digest_name = std::string(rt.substr(0, rt.rfind(':'))) + "@sha256:" + hex_string(h, 64);
    im.size = d.size;
    im.kind = d.kind;
    im.popularity = d.popularity;
    out.push_back(std::move(im));
  }
  return out;
}

int image_id(std::string_view repo_tag) {
  for (size_t i = 0; i < kImageCount; ++i)
    if (repo_tag == kImageDefs[i].repo_tag) return static_cast<int>(i);
  throw Error("generator: image missing from the catalogue: " + std::string(repo_tag));
}

size_t pick_type(SplitMix64& rng, Pool pool) {
  int total = 0;
  for (const InstanceType& t : kTypes)
    if (t.pool == pool) total += t.weight;
  int r = static_cast<int>(rng.below(static_cast<uint64_t>(total)));
  for (size_t i = 0; i < kTypeCount; ++i) {
    if (kTypes[i].pool != pool) continue;
    if (r < kTypes[i].weight) return i;
    r -= kTypes[i].weight;
  }
  return 0;
}

// kubelet cpu reserve (the GKE/EKS formula): 6% of the first core, 1% of the
// second, 0.5% of the next two, 0.25% of the rest.
int64_t reserved_cpu_milli(int cores) {
  int64_t m = 60;
  if (cores >= 2) m += 10;
  // NOLINTNEXTLINE(bugprone-implicit-widening-of-multiplication-result): small core counts
  if (cores >= 3) m += 5 * std::min(cores - 2, 2);
  if (cores > 4) m += (cores - 4) * 10 / 4;
  return m;
}

int class_of(int64_t cpu) {
  int k = 0;
  while (k + 1 < kClassCount && kClassCpu[k + 1] <= cpu) ++k;
  return k;
}

}  // namespace bulkscore::gen
