// png_check: decodes a PNG (8-bit RGB or RGBA, not interlaced: what
// Chromium's --screenshot writes) and checks that it is a real picture, not
// a blank page or an error message.
//
//   png_check FILE.png [--size W,H] [--min-colors N]
//             [--region NAME=X,Y,W,H:MIN_NONWHITE[:MIN_COLORS]]...
//
// --size: the image must be W x H pixels. --min-colors: at least N distinct
// RGB colours in the whole image. --region: in that rectangle at least the
// fraction MIN_NONWHITE of pixels is not (near) white (any channel < 245)
// and at least MIN_COLORS distinct colours appear. Prints the measurements;
// exit 0 if every check passed, 1 if one failed, 2 on bad usage.

#include <zlib.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iterator>
#include <string>
#include <unordered_set>
#include <vector>

namespace {

struct Image {
  int width = 0, height = 0;
  std::vector<uint32_t> rgb;  // 0xRRGGBB, row-major
};

uint32_t Be32(const unsigned char* p) {
  return (uint32_t{p[0]} << 24) | (uint32_t{p[1]} << 16) |
         (uint32_t{p[2]} << 8) | p[3];
}

int Paeth(int a, int b, int c) {
  int p = a + b - c;
  int pa = std::abs(p - a), pb = std::abs(p - b), pc = std::abs(p - c);
  if (pa <= pb && pa <= pc) return a;
  return pb <= pc ? b : c;
}

// Empty error on success.
std::string Decode(const std::string& file, Image* img) {
  static const unsigned char kSig[] = {0x89, 'P',  'N',  'G',
                                       '\r', '\n', 0x1a, '\n'};
  const auto* d = reinterpret_cast<const unsigned char*>(file.data());
  if (file.size() < 8 || std::memcmp(d, kSig, 8) != 0)
    return "not a PNG file (bad signature)";
  size_t pos = 8;
  int bit_depth = 0, color_type = -1, interlace = 0;
  std::string idat;
  bool ended = false;
  while (pos + 12 <= file.size() && !ended) {
    uint32_t len = Be32(d + pos);
    if (len > file.size() - pos - 12)
      return "chunk runs past the end of the file";
    std::string type(file, pos + 4, 4);
    const unsigned char* body = d + pos + 8;
    uint32_t crc = crc32(0, d + pos + 4, len + 4);
    if (crc != Be32(body + len)) return "CRC mismatch in chunk " + type;
    if (type == "IHDR") {
      if (len != 13) return "bad IHDR length";
      img->width = static_cast<int>(Be32(body));
      img->height = static_cast<int>(Be32(body + 4));
      bit_depth = body[8];
      color_type = body[9];
      interlace = body[12];
    } else if (type == "IDAT") {
      idat.append(reinterpret_cast<const char*>(body), len);
    } else if (type == "IEND") {
      ended = true;
    }
    pos += 12 + len;
  }
  if (!ended) return "no IEND chunk";
  if (img->width <= 0 || img->height <= 0 || img->width > 20000 ||
      img->height > 20000) {
    return "implausible image size";
  }
  if (bit_depth != 8 || (color_type != 2 && color_type != 6) ||
      interlace != 0) {
    return "unsupported format (want 8-bit RGB/RGBA, not interlaced): depth " +
           std::to_string(bit_depth) + ", colour type " +
           std::to_string(color_type);
  }
  const int bpp = color_type == 6 ? 4 : 3;
  const size_t stride = static_cast<size_t>(img->width) * bpp;
  std::vector<unsigned char> raw((stride + 1) * img->height);
  uLongf raw_len = raw.size();
  int zr = uncompress(raw.data(), &raw_len,
                      reinterpret_cast<const Bytef*>(idat.data()), idat.size());
  if (zr != Z_OK || raw_len != raw.size())
    return "bad image data (zlib " + std::to_string(zr) + ")";
  std::vector<unsigned char> prev(stride, 0), cur(stride);
  img->rgb.resize(static_cast<size_t>(img->width) * img->height);
  for (int y = 0; y < img->height; ++y) {
    const unsigned char* line = raw.data() + y * (stride + 1);
    int filter = line[0];
    for (size_t i = 0; i < stride; ++i) {
      int x = line[1 + i];
      int a = i >= static_cast<size_t>(bpp) ? cur[i - bpp] : 0;
      int b = prev[i];
      int c = i >= static_cast<size_t>(bpp) ? prev[i - bpp] : 0;
      switch (filter) {
        case 0:
          break;
        case 1:
          x += a;
          break;
        case 2:
          x += b;
          break;
        case 3:
          x += (a + b) / 2;
          break;
        case 4:
          x += Paeth(a, b, c);
          break;
        default:
          return "bad filter type " + std::to_string(filter) + " in row " +
                 std::to_string(y);
      }
      cur[i] = static_cast<unsigned char>(x);
    }
    for (int x = 0; x < img->width; ++x) {
      const unsigned char* p = &cur[static_cast<size_t>(x) * bpp];
      img->rgb[static_cast<size_t>(y) * img->width + x] =
          (uint32_t{p[0]} << 16) | (uint32_t{p[1]} << 8) | p[2];
    }
    prev.swap(cur);
  }
  return "";
}

bool NearWhite(uint32_t c) {
  return ((c >> 16) & 0xff) >= 245 && ((c >> 8) & 0xff) >= 245 &&
         (c & 0xff) >= 245;
}

int Usage() {
  std::fprintf(stderr,
               "usage: png_check FILE.png [--size W,H] [--min-colors N] "
               "[--region NAME=X,Y,W,H:MIN_NONWHITE[:MIN_COLORS]]...\n");
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) return Usage();
  const char* path = argv[1];
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    std::fprintf(stderr, "png_check: cannot open %s\n", path);
    return 1;
  }
  std::string file((std::istreambuf_iterator<char>(in)),
                   std::istreambuf_iterator<char>());
  Image img;
  std::string err = Decode(file, &img);
  if (!err.empty()) {
    std::printf("FAIL %s: %s\n", path, err.c_str());
    return 1;
  }
  std::unordered_set<uint32_t> all(img.rgb.begin(), img.rgb.end());
  std::printf("%s: %dx%d, %zu distinct colours\n", path, img.width, img.height,
              all.size());
  int failed = 0;
  for (int i = 2; i < argc; ++i) {
    std::string a = argv[i];
    if (i + 1 >= argc) return Usage();
    std::string v = argv[++i];
    if (a == "--size") {
      int w = 0, h = 0;
      if (std::sscanf(v.c_str(), "%d,%d", &w, &h) != 2) return Usage();
      bool ok = img.width == w && img.height == h;
      std::printf("%s size %dx%d (want %dx%d)\n", ok ? "ok  " : "FAIL",
                  img.width, img.height, w, h);
      failed += !ok;
    } else if (a == "--min-colors") {
      size_t n = std::strtoul(v.c_str(), nullptr, 10);
      bool ok = all.size() >= n;
      std::printf("%s %zu distinct colours (want >= %zu)\n",
                  ok ? "ok  " : "FAIL", all.size(), n);
      failed += !ok;
    } else if (a == "--region") {
      char name[64];
      int x, y, w, h;
      double min_nonwhite = 0;
      unsigned min_colors = 0;
      int got = std::sscanf(v.c_str(), "%63[^=]=%d,%d,%d,%d:%lf:%u", name, &x,
                            &y, &w, &h, &min_nonwhite, &min_colors);
      if (got < 6 || w <= 0 || h <= 0) return Usage();
      if (x < 0 || y < 0 || x + w > img.width || y + h > img.height) {
        std::printf("FAIL region %s (%d,%d %dx%d) is outside the %dx%d image\n",
                    name, x, y, w, h, img.width, img.height);
        ++failed;
        continue;
      }
      size_t nonwhite = 0;
      std::unordered_set<uint32_t> colors;
      for (int yy = y; yy < y + h; ++yy) {
        for (int xx = x; xx < x + w; ++xx) {
          uint32_t c = img.rgb[static_cast<size_t>(yy) * img.width + xx];
          nonwhite += !NearWhite(c);
          colors.insert(c);
        }
      }
      double frac =
          static_cast<double>(nonwhite) / (static_cast<double>(w) * h);
      bool ok = frac >= min_nonwhite && colors.size() >= min_colors;
      std::printf(
          "%s region %s: %.3f non-white (want >= %.3f), %zu colours (want >= "
          "%u)\n",
          ok ? "ok  " : "FAIL", name, frac, min_nonwhite, colors.size(),
          min_colors);
      failed += !ok;
    } else {
      return Usage();
    }
  }
  return failed ? 1 : 0;
}
