// Minimal SVG charts for reports: line plots and grouped bars, no dependencies.
#pragma once

#include <string>
#include <utility>
#include <vector>

namespace kaleido::svg {

struct Series {
  std::string name;
  std::vector<std::pair<double, double>> points;  // (x, y); non-finite y are skipped
  bool dashed = false;
};

struct PlotSpec {
  std::string title, x_label, y_label;
  bool x_percent = false;  // x in [0, 1] shown as percent
  double x_min = 0.0, x_max = 1.0;
  bool auto_y = true;
  double y_min = 0.0, y_max = 1.0;
  double y_cap = 1e300;  // auto range stops here; higher points are drawn at the top
  std::vector<double> x_marks;  // vertical guide lines
};

std::string line_plot(const PlotSpec& spec, const std::vector<Series>& series);

// Bars: categories along x, one bar per series in each category; y from 0
// to the largest value (auto_y) or in [y_min, y_max].
std::string bar_plot(const PlotSpec& spec, const std::vector<std::string>& categories, const std::vector<Series>& series);

}  // namespace kaleido::svg
