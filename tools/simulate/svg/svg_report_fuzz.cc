// Fuzz target for the SVG picture: bytes become builder options, a title
// and policy names (untrusted: they come from trace file names) and a stream
// of builder events; the finished report must validate, render, and parse
// as well-formed XML whose <title> is the title's first characters.

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <string>

#include "tools/simulate/svg/svg_report.h"
#include "tools/simulate/svg/svg_report_builder.h"
#include "tools/simulate/svg/xml_check.h"

namespace {

struct Input {
  const uint8_t* p;
  size_t n;
  uint64_t Take(int bytes) {
    uint64_t v = 0;
    for (int i = 0; i < bytes; ++i) {
      v = (v << 8) | (n > 0 ? *p : 0);
      if (n > 0) ++p, --n;
    }
    return v;
  }
  std::string String() {
    size_t len = Take(1) % 48;
    if (len > n) len = n;
    std::string s(reinterpret_cast<const char*>(p), len);
    p += len;
    n -= len;
    return s;
  }
};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace hotpage::simulate;
  Input in{data, size};
  SvgReportBuilderOptions opt;
  opt.max_rows = static_cast<int>(in.Take(1) % 20);       // clamped to >= 2
  opt.max_intervals = static_cast<int>(in.Take(1) % 40);  // clamped to >= 1
  opt.interval_s = (in.Take(1) % 8) * 0.25;               // 0 is clamped to 1
  std::string title = in.String();
  std::string subject = in.String();
  SvgReportBuilder b(opt);
  int policies = static_cast<int>(in.Take(1) % 4);
  for (int i = 0; i < policies; ++i) b.AddPolicy(in.String(), i == 0);
  while (in.n > 0) {
    uint64_t op = in.Take(1);
    double t = static_cast<double>(in.Take(2)) / 64 - 16;
    // Addresses: a few bytes of spread around a few bases, or anywhere.
    uint64_t addr =
        (op & 0x80) ? in.Take(8) : (in.Take(1) << 40) | (in.Take(2) << 12);
    switch (op % 6) {
      case 0:
        b.AddAccess(t, addr, in.Take(1));
        break;
      case 1:
        b.AddPage(t, addr, (op & 0x40) ? Tier::kFast : Tier::kSlow);
        break;
      case 2:
        b.MovePage(t, addr, (op & 0x40) ? Tier::kFast : Tier::kSlow);
        break;
      case 3:
        b.RemovePage(t, addr, (op & 0x40) ? Tier::kFast : Tier::kSlow);
        break;
      case 4:
        b.AddPolicyAccess(static_cast<int>(op >> 3) % 5 - 1, t, op & 0x40,
                          in.Take(1));
        break;
      case 5:
        break;
    }
  }
  SvgReport report = b.Finish(title, title, subject, (data[0] & 1) ? 9.0 : NAN);
  if (!ValidateSvgReport(report).ok()) std::abort();
  auto svg = RenderSvg(report);
  if (!svg.ok()) std::abort();
  auto elements = CheckXml(*svg);
  if (!elements.ok() || elements->empty() || (*elements)[0].name != "svg")
    std::abort();
  if ((*elements)[1].name != "title") std::abort();
  return 0;
}
