#include "common/format.hpp"
#include "common/svg.hpp"

#include <algorithm>
#include <cmath>
#include <sstream>

namespace kaleido::svg {

namespace {

constexpr double kW = 760, kH = 460, kLeft = 70, kRight = 210, kTop = 40, kBottom = 60;
const char* const kColors[] = {"#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#8c564b",
                               "#e377c2", "#7f7f7f", "#bcbd22", "#17becf", "#ff7f0e"};

std::string esc(const std::string& s) {
  std::string o;
  for (char c : s) {
    if (c == '<')
      o += "&lt;";
    else if (c == '>')
      o += "&gt;";
    else if (c == '&')
      o += "&amp;";
    else
      o += c;
  }
  return o;
}

std::string num(double v) { return sig(v, 4); }

// "Nice" tick step for a range.
double tick_step(double range, int target) {
  const double raw = range / std::max(1, target);
  const double mag = std::pow(10.0, std::floor(std::log10(raw)));
  for (double m : {1.0, 2.0, 5.0, 10.0})
    if (raw <= m * mag) return m * mag;
  return 10.0 * mag;
}

struct Frame {
  double x0, x1, y0, y1;
  double px(double x) const { return kLeft + (x - x0) / (x1 - x0) * (kW - kLeft - kRight); }
  double py(double y) const { return kH - kBottom - (y - y0) / (y1 - y0) * (kH - kTop - kBottom); }
};

void axes(std::ostringstream& o, const PlotSpec& spec, const Frame& f, bool x_ticks) {
  o << "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" << kW << "\" height=\"" << kH << "\" viewBox=\"0 0 " << kW
    << " " << kH << "\" font-family=\"sans-serif\" font-size=\"12\">\n";
  o << "<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n";
  o << "<text x=\"" << kW / 2 << "\" y=\"22\" text-anchor=\"middle\" font-size=\"14\">" << esc(spec.title) << "</text>\n";
  const double ys = tick_step(f.y1 - f.y0, 6);
  for (double y = std::ceil(f.y0 / ys) * ys; y <= f.y1 + 1e-9; y += ys) {
    o << "<line x1=\"" << kLeft << "\" x2=\"" << kW - kRight << "\" y1=\"" << f.py(y) << "\" y2=\"" << f.py(y)
      << "\" stroke=\"#e6e6e6\"/>\n";
    o << "<text x=\"" << kLeft - 6 << "\" y=\"" << f.py(y) + 4 << "\" text-anchor=\"end\">" << num(y) << "</text>\n";
  }
  if (x_ticks) {
    const double xs = tick_step(f.x1 - f.x0, 8);
    for (double x = std::ceil(f.x0 / xs) * xs; x <= f.x1 + 1e-9; x += xs) {
      o << "<line x1=\"" << f.px(x) << "\" x2=\"" << f.px(x) << "\" y1=\"" << kTop << "\" y2=\"" << kH - kBottom
        << "\" stroke=\"#f0f0f0\"/>\n";
      o << "<text x=\"" << f.px(x) << "\" y=\"" << kH - kBottom + 16 << "\" text-anchor=\"middle\">"
        << (spec.x_percent ? num(100.0 * x) + "%" : num(x)) << "</text>\n";
    }
  }
  o << "<rect x=\"" << kLeft << "\" y=\"" << kTop << "\" width=\"" << kW - kLeft - kRight << "\" height=\""
    << kH - kTop - kBottom << "\" fill=\"none\" stroke=\"#333\"/>\n";
  o << "<text x=\"" << (kLeft + kW - kRight) / 2 << "\" y=\"" << kH - 8 << "\" text-anchor=\"middle\">"
    << esc(spec.x_label) << "</text>\n";
  o << "<text transform=\"translate(18," << (kTop + kH - kBottom) / 2 << ") rotate(-90)\" text-anchor=\"middle\">"
    << esc(spec.y_label) << "</text>\n";
}

void legend(std::ostringstream& o, const std::vector<Series>& series) {
  for (size_t i = 0; i < series.size(); ++i) {
    const double y = kTop + 10 + 18.0 * static_cast<double>(i);
    o << "<line x1=\"" << kW - kRight + 12 << "\" x2=\"" << kW - kRight + 36 << "\" y1=\"" << y << "\" y2=\"" << y
      << "\" stroke=\"" << kColors[i % 10] << "\" stroke-width=\"2\"" << (series[i].dashed ? " stroke-dasharray=\"5,3\"" : "")
      << "/>\n";
    o << "<text x=\"" << kW - kRight + 42 << "\" y=\"" << y + 4 << "\">" << esc(series[i].name) << "</text>\n";
  }
}

}  // namespace

std::string line_plot(const PlotSpec& spec, const std::vector<Series>& series) {
  Frame f{spec.x_min, spec.x_max, spec.y_min, spec.y_max};
  if (spec.auto_y) {
    double lo = 1e300, hi = -1e300;
    for (const Series& s : series)
      for (const auto& [x, y] : s.points)
        if (std::isfinite(y) && x >= spec.x_min && x <= spec.x_max) {
          lo = std::min(lo, y);
          hi = std::max(hi, y);
        }
    if (lo > hi) lo = 0, hi = 1;
    hi = std::min(hi, spec.y_cap);  // near-exact points would squash the interesting range
    if (hi - lo < 1e-9) hi = lo + 1;
    const double pad = 0.05 * (hi - lo);
    f.y0 = lo - pad;
    f.y1 = hi + pad;
  }
  std::ostringstream o;
  axes(o, spec, f, true);
  for (double x : spec.x_marks)
    o << "<line x1=\"" << f.px(x) << "\" x2=\"" << f.px(x) << "\" y1=\"" << kTop << "\" y2=\"" << kH - kBottom
      << "\" stroke=\"#999\" stroke-dasharray=\"2,3\"/>\n";
  for (size_t i = 0; i < series.size(); ++i) {
    std::vector<std::pair<double, double>> pts;
    for (const auto& p : series[i].points)
      if (std::isfinite(p.second) && std::isfinite(p.first)) pts.push_back(p);
    std::sort(pts.begin(), pts.end());
    const char* c = kColors[i % 10];
    if (pts.size() > 1) {
      o << "<polyline fill=\"none\" stroke=\"" << c << "\" stroke-width=\"2\""
        << (series[i].dashed ? " stroke-dasharray=\"5,3\"" : "") << " points=\"";
      for (const auto& [x, y] : pts) o << f.px(x) << "," << f.py(std::clamp(y, f.y0, f.y1)) << " ";
      o << "\"/>\n";
    }
    for (const auto& [x, y] : pts)
      o << "<circle cx=\"" << f.px(x) << "\" cy=\"" << f.py(std::clamp(y, f.y0, f.y1)) << "\" r=\"3\" fill=\"" << c << "\"/>\n";
  }
  legend(o, series);
  o << "</svg>\n";
  return o.str();
}

std::string bar_plot(const PlotSpec& spec, const std::vector<std::string>& categories, const std::vector<Series>& series) {
  const double n = static_cast<double>(std::max<size_t>(1, categories.size()));
  Frame f{0.0, n, spec.y_min, spec.y_max};
  if (spec.auto_y) {  // bars start at zero
    double hi = 0.0;
    for (const Series& s : series)
      for (const auto& p : s.points)
        if (std::isfinite(p.second)) hi = std::max(hi, std::min(p.second, spec.y_cap));
    f.y0 = 0.0;
    f.y1 = hi > 0.0 ? hi * 1.1 : 1.0;
  }
  std::ostringstream o;
  axes(o, spec, f, false);
  const double slot = (kW - kLeft - kRight) / n;
  const double bw = slot * 0.8 / static_cast<double>(std::max<size_t>(1, series.size()));
  for (size_t c = 0; c < categories.size(); ++c) {
    // Many categories: labels turned so that they do not overlap.
    const double lx = f.px(static_cast<double>(c) + 0.5), ly = kH - kBottom + 14;
    if (categories.size() > 8)
      o << "<text transform=\"translate(" << lx << "," << ly << ") rotate(-40)\" text-anchor=\"end\" font-size=\"10\">"
        << esc(categories[c]) << "</text>\n";
    else
      o << "<text x=\"" << lx << "\" y=\"" << ly << "\" text-anchor=\"middle\" font-size=\"10\">" << esc(categories[c])
        << "</text>\n";
    for (size_t s = 0; s < series.size(); ++s) {
      if (c >= series[s].points.size()) continue;
      const double y = std::clamp(series[s].points[c].second, f.y0, f.y1);
      if (!std::isfinite(y)) continue;
      const double x = f.px(static_cast<double>(c)) + slot * 0.1 + bw * static_cast<double>(s);
      o << "<rect x=\"" << x << "\" y=\"" << f.py(y) << "\" width=\"" << bw << "\" height=\"" << f.py(f.y0) - f.py(y)
        << "\" fill=\"" << kColors[s % 10] << "\"/>\n";
    }
  }
  legend(o, series);
  o << "</svg>\n";
  return o.str();
}

}  // namespace kaleido::svg
