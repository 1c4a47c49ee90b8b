// png_check: decodes a PNG with libpng (any PNG; Chromium's --screenshot
// writes 8-bit RGB or RGBA) and checks that it is a real picture, not a
// blank page or an error message.
//
//   png_check FILE.png [--size W,H] [--min-colors N]
//             [--region NAME=X,Y,W,H:MIN_NONWHITE[:MIN_COLORS]]...
//
// --size: the image must be W x H pixels. --min-colors: at least N distinct
// RGB colours in the whole image. --region: in that rectangle at least the
// fraction MIN_NONWHITE of pixels is not (near) white (any channel < 245)
// and at least MIN_COLORS distinct colours appear. Prints the measurements;
// exit 0 if every check passed, 1 if one failed, 2 on bad usage.

#include <png.h>

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

// Empty error on success. libpng's simplified API checks the signature,
// chunk CRCs and the zlib stream, and converts any colour type and bit
// depth to 8-bit RGBA (not premultiplied); the check looks at RGB only.
std::string Decode(const std::string& file, Image* img) {
  png_image image;
  std::memset(&image, 0, sizeof(image));
  image.version = PNG_IMAGE_VERSION;
  if (!png_image_begin_read_from_memory(&image, file.data(), file.size())) {
    return std::string("not a readable PNG: ") + image.message;
  }
  if (image.width == 0 || image.height == 0 || image.width > 20000 ||
      image.height > 20000) {
    png_image_free(&image);
    return "implausible image size";
  }
  image.format = PNG_FORMAT_RGBA;
  std::vector<unsigned char> pixels(PNG_IMAGE_SIZE(image));
  if (!png_image_finish_read(&image, /*background=*/nullptr, pixels.data(),
                             /*row_stride=*/0, /*colormap=*/nullptr)) {
    return std::string("bad image data: ") + image.message;
  }
  img->width = static_cast<int>(image.width);
  img->height = static_cast<int>(image.height);
  img->rgb.resize(static_cast<size_t>(img->width) * img->height);
  for (size_t i = 0; i < img->rgb.size(); ++i) {
    const unsigned char* p = &pixels[i * 4];
    img->rgb[i] = (uint32_t{p[0]} << 16) | (uint32_t{p[1]} << 8) | p[2];
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
