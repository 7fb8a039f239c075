// `mabd plot STATS.jsonl -o plots.svg`: the per-step statistics of a run as a self-contained
// SVG (no browser, no plotting library): energies, momenta, residuals (log scale), Newton
// iterations and wall time per step, against simulated time.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "cli/commands.h"

namespace mabd::cli {
namespace {

struct Series {
  std::string name;
  std::string colour;
  std::vector<double> y;
};

struct Panel {
  std::string title;
  bool log = false;
  std::vector<Series> series;
};

double norm3(const nlohmann::json& v) {
  double s = 0;
  for (const auto& x : v) s += x.get<double>() * x.get<double>();
  return std::sqrt(s);
}

std::string fmt(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.3g", v);
  return buf;
}

/// One panel at (x0, y0) of size w x h: frame, title, min/max labels, polylines, legend.
void draw_panel(std::ostringstream& svg, const Panel& p, const std::vector<double>& t, double x0,
                double y0, double w, double h) {
  const double left = 60, right = 10, top = 24, bottom = 28;
  const double pw = w - left - right, ph = h - top - bottom;
  auto tr = [&](double v) { return p.log ? std::log10(std::max(v, 1e-300)) : v; };
  double lo = INFINITY, hi = -INFINITY;
  for (const auto& s : p.series)
    for (double v : s.y) {
      if (!std::isfinite(v) || (p.log && v <= 0)) continue;
      lo = std::min(lo, tr(v));
      hi = std::max(hi, tr(v));
    }
  if (!std::isfinite(lo)) lo = 0, hi = 1;
  if (hi - lo < 1e-12 * std::max(1.0, std::abs(hi))) lo -= 0.5, hi += 0.5;
  const double t0 = t.empty() ? 0 : t.front(), t1 = t.empty() ? 1 : std::max(t.back(), t0 + 1e-12);
  svg << "<g transform=\"translate(" << x0 << "," << y0 << ")\">\n";
  svg << "<text x=\"" << left << "\" y=\"16\" font-size=\"13\" font-weight=\"bold\">" << p.title
      << (p.log ? " (log scale)" : "") << "</text>\n";
  svg << "<rect x=\"" << left << "\" y=\"" << top << "\" width=\"" << pw << "\" height=\"" << ph
      << "\" fill=\"none\" stroke=\"#888\"/>\n";
  auto label = [&](double v) { return fmt(p.log ? std::pow(10.0, v) : v); };
  svg << "<text x=\"" << left - 4 << "\" y=\"" << top + 10 << "\" font-size=\"10\" text-anchor=\"end\">"
      << label(hi) << "</text>\n";
  svg << "<text x=\"" << left - 4 << "\" y=\"" << top + ph << "\" font-size=\"10\" text-anchor=\"end\">"
      << label(lo) << "</text>\n";
  svg << "<text x=\"" << left << "\" y=\"" << top + ph + 14 << "\" font-size=\"10\">" << fmt(t0)
      << " s</text>\n";
  svg << "<text x=\"" << left + pw << "\" y=\"" << top + ph + 14
      << "\" font-size=\"10\" text-anchor=\"end\">" << fmt(t1) << " s</text>\n";
  double legend_x = left + 6;
  for (const auto& s : p.series) {
    svg << "<polyline fill=\"none\" stroke=\"" << s.colour << "\" stroke-width=\"1.2\" points=\"";
    // At most ~2 points per pixel column keeps large runs small.
    const std::size_t stride = std::max<std::size_t>(1, s.y.size() / static_cast<std::size_t>(2 * pw));
    for (std::size_t i = 0; i < s.y.size() && i < t.size(); i += stride) {
      if (!std::isfinite(s.y[i]) || (p.log && s.y[i] <= 0)) continue;
      const double x = left + pw * (t[i] - t0) / (t1 - t0);
      const double y = top + ph * (1 - (tr(s.y[i]) - lo) / (hi - lo));
      svg << fmt(x) << "," << fmt(y) << " ";
    }
    svg << "\"/>\n";
    svg << "<text x=\"" << legend_x << "\" y=\"" << top + 12 << "\" font-size=\"10\" fill=\""
        << s.colour << "\">" << s.name << "</text>\n";
    legend_x += 8 + 6.5 * static_cast<double>(s.name.size());
  }
  svg << "</g>\n";
}

}  // namespace

int plot_command(const PlotOptions& options) {
  const std::string& out = options.output;
  if (out.size() < 4 || out.substr(out.size() - 4) != ".svg") {
    throw UsageError("-o: unsupported output '" + out + "' (supported: .svg)");
  }
  std::ifstream in(options.stats);
  if (!in) throw UsageError(options.stats + ": cannot open file");
  std::vector<double> t;
  std::map<std::string, std::vector<double>> col;
  std::string line;
  int line_no = 0;
  auto get = [](const nlohmann::json& j, const char* key) {
    return j.contains(key) && j[key].is_number() ? j[key].get<double>() : NAN;
  };
  while (std::getline(in, line)) {
    ++line_no;
    if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
    nlohmann::json j;
    try {
      j = nlohmann::json::parse(line);
    } catch (const nlohmann::json::parse_error&) {
      if (in.eof()) {  // an unterminated last line: a run killed while writing it
        std::fprintf(stderr, "mabd: warning: %s:%d: last line is cut (the run was killed while "
                             "writing it); skipped\n", options.stats.c_str(), line_no);
        break;
      }
      throw UsageError(options.stats + ":" + std::to_string(line_no) + ": not a JSON object");
    }
    if (!j.is_object() || !j.contains("time")) {
      throw UsageError(options.stats + ":" + std::to_string(line_no) +
                       ": expected a stats object with a \"time\" field");
    }
    t.push_back(get(j, "time"));
    const double ke = get(j, "kinetic_energy"), pe = get(j, "potential_energy");
    col["kinetic"].push_back(ke);
    col["potential"].push_back(pe);
    col["total"].push_back(ke + pe);
    col["|p|"].push_back(j.contains("linear_momentum") ? norm3(j["linear_momentum"]) : NAN);
    col["|L|"].push_back(j.contains("angular_momentum") ? norm3(j["angular_momentum"]) : NAN);
    col["newton increment"].push_back(get(j, "residual"));
    col["joint |C|"].push_back(get(j, "joint_residual"));
    col["iterations"].push_back(get(j, "newton_iterations"));
    col["ms/step"].push_back(get(j, "wall_ms"));
  }
  if (t.empty()) throw UsageError(options.stats + ": no stats lines");
  const std::vector<Panel> panels = {
      {"Energy (J)", false, {{"kinetic", "#d62728", col["kinetic"]}, {"potential", "#1f77b4", col["potential"]}, {"total", "#111", col["total"]}}},
      {"Linear momentum (kg m/s)", false, {{"|p|", "#2ca02c", col["|p|"]}}},
      {"Angular momentum (kg m^2/s)", false, {{"|L|", "#9467bd", col["|L|"]}}},
      {"Residuals (m)", true, {{"newton increment", "#ff7f0e", col["newton increment"]}, {"joint |C|", "#17becf", col["joint |C|"]}}},
      {"Newton iterations", false, {{"iterations", "#8c564b", col["iterations"]}}},
      {"Wall time (ms/step)", false, {{"ms/step", "#7f7f7f", col["ms/step"]}}},
  };
  const double W = 460, H = 230;
  std::ostringstream svg;
  svg << "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" << 2 * W << "\" height=\"" << 3 * H
      << "\" font-family=\"sans-serif\">\n<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n";
  for (std::size_t i = 0; i < panels.size(); ++i) {
    draw_panel(svg, panels[i], t, (i % 2) * W, static_cast<double>(i / 2) * H, W, H);
  }
  svg << "</svg>\n";
  std::ofstream file(out);
  if (!file || !(file << svg.str())) throw OutputError(out + ": cannot write");
  std::printf("%s: %zu steps plotted\n", out.c_str(), t.size());
  return 0;
}

}  // namespace mabd::cli
