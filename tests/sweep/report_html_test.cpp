// The sweep's HTML page (sweep/report_html.hpp) on rows read back from a real database: counts per
// library and outcome class, escaping of a hostile file name and exception class, the strict CSP,
// images only where a thumbnail exists; the thumbnails themselves (sweep/thumbnail.hpp) and the
// ImageKeeper that writes them.
#include <png.h>
#include <zlib.h>

#include <catch2/catch.hpp>
#include <cstring>
#include <fstream>
#include <map>
#include <regex>
#include <sstream>

#include "store/sweep_images.hpp"
#include "sweep/images.hpp"
#include "sweep/report.hpp"
#include "sweep/report_html.hpp"
#include "sweep/thumbnail.hpp"
#include "tests/sweep/helpers.hpp"

using namespace plotq;
using namespace plotq::sweep_test;

namespace {

// A path and a class such as a stranger's plot file could bring (a directory name, an exception
// class the harness reports by name).
const std::string kHostilePath = "plots/<img src=x onerror=alert(1)>&\"q'/implementations/python/matplotlib.py";
const std::string kHostileClass = "</td><script>alert(2)</script>";

// Every "data-library=L data-class=C>N<" cell of the counts table.
std::map<std::pair<std::string, std::string>, int> count_cells(const std::string& html) {
  std::map<std::pair<std::string, std::string>, int> out;
  std::regex cell(R"re(<td data-library="([^"]*)" data-class="([^"]*)"(?: class="zero")?>(\d+)</td>)re");
  for (auto it = std::sregex_iterator(html.begin(), html.end(), cell); it != std::sregex_iterator(); ++it)
    out[{(*it)[1].str(), (*it)[2].str()}] = std::stoi((*it)[3].str());
  return out;
}

std::size_t occurrences(const std::string& hay, const std::string& needle) {
  std::size_t n = 0;
  for (auto p = hay.find(needle); p != std::string::npos; p = hay.find(needle, p + 1)) ++n;
  return n;
}

// An RGBA PNG of w x h: left half opaque red, right half opaque blue, or alpha everywhere.
std::string make_png(int w, int h, std::uint8_t alpha = 255) {
  std::vector<std::uint8_t> px(static_cast<std::size_t>(w) * h * 4);
  for (int y = 0; y < h; ++y)
    for (int x = 0; x < w; ++x) {
      std::uint8_t* p = px.data() + (static_cast<std::size_t>(y) * w + x) * 4;
      bool left = x < w / 2;
      p[0] = left ? 255 : 0, p[1] = 0, p[2] = left ? 0 : 255, p[3] = alpha;
    }
  png_image img;
  std::memset(&img, 0, sizeof img);
  img.version = PNG_IMAGE_VERSION;
  img.width = w, img.height = h, img.format = PNG_FORMAT_RGBA;
  png_alloc_size_t n = 0;
  REQUIRE(png_image_write_to_memory(&img, nullptr, &n, 0, px.data(), 0, nullptr));
  std::string out(n, '\0');
  REQUIRE(png_image_write_to_memory(&img, out.data(), &n, 0, px.data(), 0, nullptr));
  out.resize(n);
  return out;
}

struct Decoded {
  int w = 0, h = 0;
  png_uint_32 format = 0;
  std::vector<std::uint8_t> rgba;
};

Decoded decode(const std::string& png) {
  png_image img;
  std::memset(&img, 0, sizeof img);
  img.version = PNG_IMAGE_VERSION;
  REQUIRE(png_image_begin_read_from_memory(&img, png.data(), png.size()));
  Decoded d;
  d.w = static_cast<int>(img.width), d.h = static_cast<int>(img.height), d.format = img.format;
  img.format = PNG_FORMAT_RGBA;
  d.rgba.resize(PNG_IMAGE_SIZE(img));
  REQUIRE(png_image_finish_read(&img, nullptr, d.rgba.data(), 0, nullptr));
  return d;
}

}  // namespace

TEST_CASE("report html: escaping keeps a hostile name and class as text") {
  CHECK(runs::html_escape("<a href=\"x\">'&'</a>") == "&lt;a href=&quot;x&quot;&gt;&#39;&amp;&#39;&lt;/a&gt;");
  CHECK(runs::html_escape("plot \xC3\xA9t\xC3\xA9 \xE2\x9C\x93") == "plot \xC3\xA9t\xC3\xA9 \xE2\x9C\x93");
  // Invalid UTF-8 (a lone continuation byte, a truncated sequence, an overlong '<', a surrogate)
  // becomes U+FFFD, never a byte a browser could read another way.
  CHECK(runs::html_escape("a\x80" "b\xE2\x9C") == "a\xEF\xBF\xBD" "b\xEF\xBF\xBD\xEF\xBF\xBD");
  CHECK(runs::html_escape("\xC0\xBC") == "\xEF\xBF\xBD\xEF\xBF\xBD");
  CHECK(runs::html_escape("\xED\xA0\x80") == "\xEF\xBF\xBD\xEF\xBF\xBD\xEF\xBF\xBD");
}

TEST_CASE("report html: counts per library and outcome class match the rows, hostile text escaped") {
  TempDir t;
  auto db = migrated(t.file("p.db"));
  std::int64_t id = store::sweeps::create(*db, make_sweep("html", "bare", "light,dark"), kNow);
  auto file = [&](std::vector<store::SweepResult> rows) { store::sweeps::record_file(*db, id, rows, kNow); };
  file({render_row("a/matplotlib.py", "light"), render_row("a/matplotlib.py", "dark")});
  file({render_row(kHostilePath, "light"), fail_row(kHostilePath, "plot_error", kHostileClass, "dark")});
  file({fail_row("b/matplotlib.py", "plot_error", "ValueError", "light"),
        fail_row("b/matplotlib.py", "timeout", std::nullopt, "dark")});
  auto sb = render_row("c/seaborn.py", "light");
  auto sb_dark = fail_row("c/seaborn.py", "plot_error", "ValueError", "dark");
  sb.library = sb_dark.library = "seaborn";
  file({sb, sb_dark});

  store::Sweep s = *store::sweeps::find(*db, "html");
  std::vector<store::SweepResult> rows = store::sweeps::results(*db, id);
  // Thumbnails exist for two of the four renders.
  std::set<std::string> images = {runs::sweep_image_name("a/matplotlib.py", "light"),
                                  runs::sweep_image_name(kHostilePath, "light")};
  std::string html = runs::report_html(runs::sweep_report(s, rows), rows, images);

  // The counts, recomputed here from the rows read back.
  std::map<std::pair<std::string, std::string>, int> expected;
  std::map<std::string, std::set<std::string>> files;
  for (const auto& r : rows) {
    // The cells' attributes are escaped like everything else.
    ++expected[{runs::html_escape(r.library), runs::html_escape(r.outcome == store::SweepOutcome::render ? "render" : r.reason_class)}];
    files[r.library].insert(r.path);
  }
  for (const auto& [lib, paths] : files) expected[{lib, "files"}] = static_cast<int>(paths.size());
  auto cells = count_cells(html);
  // Every library x class pair has a cell; the ones not in `expected` must be 0.
  for (const auto& [key, n] : cells) {
    auto it = expected.find(key);
    INFO(key.first << " " << key.second);
    CHECK(n == (it == expected.end() ? 0 : it->second));
  }
  for (const auto& [key, n] : expected) CHECK(cells.count(key) == 1);
  CHECK(expected.at({"matplotlib", "render"}) == 3);  // the fixture is what this test thinks it is
  CHECK(expected.at({"matplotlib", "ValueError"}) == 1);

  // The hostile path and class appear only escaped, nothing of them as markup.
  CHECK(html.find(kHostilePath) == std::string::npos);
  CHECK(html.find(kHostileClass) == std::string::npos);
  CHECK(html.find("<script") == std::string::npos);
  CHECK(html.find("<img src=x") == std::string::npos);
  CHECK(html.find(runs::html_escape(kHostilePath)) != std::string::npos);
  CHECK(html.find(runs::html_escape(kHostileClass)) != std::string::npos);

  // A strict policy: nothing but images from the page's directory and the one style, by hash.
  std::string csp = runs::report_csp();
  CHECK(csp.find("default-src 'none'") == 0);
  CHECK(csp.find("unsafe") == std::string::npos);
  CHECK(csp.find("script-src") == std::string::npos);
  CHECK(html.find("<meta http-equiv=\"Content-Security-Policy\" content=\"" + csp + "\">") != std::string::npos);
  CHECK(html.find("http://") == std::string::npos);
  CHECK(html.find("https://") == std::string::npos);

  // An <img> for each thumbnail that exists, a box for the other renders and every fail.
  CHECK(occurrences(html, "<img ") == images.size());
  for (const auto& name : images) CHECK(html.find("src=\"img/" + name + "\"") != std::string::npos);
  CHECK(occurrences(html, "<div class=\"noimg\">no image kept</div>") == 2);
  CHECK(occurrences(html, "<article class=\"file\"") == 4);
  // Each card shows the themes in the sweep's order (light,dark), not the rows' (by name).
  auto card = html.find("data-path=\"a/matplotlib.py\"");
  REQUIRE(card != std::string::npos);
  CHECK(html.find("data-theme=\"light\"", card) < html.find("data-theme=\"dark\"", card));
}

TEST_CASE("report html: the diff shows each changed file's two sides, escaped") {
  TempDir t;
  auto db = migrated(t.file("p.db"));
  std::int64_t a = store::sweeps::create(*db, make_sweep("before"), kNow);
  std::int64_t b = store::sweeps::create(*db, make_sweep("after"), kNow);
  store::sweeps::record_file(*db, a, {render_row(kHostilePath)}, kNow);
  store::sweeps::record_file(*db, b, {fail_row(kHostilePath, "plot_error", kHostileClass, "light", 'b')}, kNow);
  store::sweeps::record_file(*db, a, {render_row("same/matplotlib.py")}, kNow);
  store::sweeps::record_file(*db, b, {render_row("same/matplotlib.py")}, kNow);
  store::sweeps::record_file(*db, b, {render_row("new/matplotlib.py")}, kNow);
  auto sa = *store::sweeps::find(*db, "before"), sb = *store::sweeps::find(*db, "after");
  nlohmann::json d = runs::sweep_diff(sa, store::sweeps::results(*db, a), sb, store::sweeps::results(*db, b));
  REQUIRE(d["count"] == 2);
  std::string name = runs::sweep_image_name(kHostilePath, "light");
  std::string html = runs::diff_html(d, {name}, {runs::sweep_image_name("new/matplotlib.py", "light")});
  CHECK(occurrences(html, "<section class=\"diff\"") == 2);
  CHECK(html.find("src=\"img/a/" + name + "\"") != std::string::npos);
  CHECK(html.find("src=\"img/b/" + runs::sweep_image_name("new/matplotlib.py", "light") + "\"") != std::string::npos);
  CHECK(occurrences(html, "<img ") == 2);
  CHECK(html.find("data-cause=\"file\"") != std::string::npos);  // the hash changed
  CHECK(html.find("data-kind=\"only_b\"") != std::string::npos);
  CHECK(html.find(kHostilePath) == std::string::npos);
  CHECK(html.find(kHostileClass) == std::string::npos);
  CHECK(html.find("<script") == std::string::npos);
  CHECK(html.find(runs::html_escape("fail " + kHostileClass)) != std::string::npos);
}

TEST_CASE("thumbnail: both canvases scale by a tenth, colours and alpha kept, bad input refused") {
  for (auto [w, h] : {std::pair{3200, 1800}, std::pair{2400, 2400}, std::pair{800, 600}}) {
    auto thumb = runs::png_thumbnail(make_png(w, h));
    REQUIRE(thumb);
    Decoded d = decode(*thumb);
    INFO(w << "x" << h);
    double scale = std::min({1.0, 320.0 / w, 240.0 / h});
    CHECK(d.w == static_cast<int>(w * scale + 0.5));
    CHECK(d.h == static_cast<int>(h * scale + 0.5));
    CHECK(d.format == PNG_FORMAT_RGB);  // opaque: no alpha channel
    const std::uint8_t* left = d.rgba.data() + (d.h / 2 * d.w + 1) * 4;
    const std::uint8_t* right = d.rgba.data() + (d.h / 2 * d.w + d.w - 2) * 4;
    CHECK((left[0] == 255 && left[2] == 0));
    CHECK((right[0] == 0 && right[2] == 255));
  }
  // Never enlarged.
  Decoded small = decode(*runs::png_thumbnail(make_png(100, 50)));
  CHECK((small.w == 100 && small.h == 50));
  // Half transparent: RGBA, the colour not darkened by the transparency.
  Decoded half = decode(*runs::png_thumbnail(make_png(640, 360, 128)));
  CHECK(half.format == PNG_FORMAT_RGBA);
  CHECK((half.rgba[3] == 128 && half.rgba[0] == 255));

  CHECK_FALSE(runs::png_thumbnail("not a png at all"));
  CHECK_FALSE(runs::png_thumbnail(make_png(10, 10).substr(0, 40)));  // cut short
  // A header that declares 30000 x 30000 (a child's output can say anything): refused before any
  // pixel buffer is allocated.
  std::string big = make_png(1, 1);
  auto put32 = [&](std::size_t at, std::uint32_t v) {
    for (int i = 0; i < 4; ++i) big[at + i] = static_cast<char>(v >> (24 - 8 * i));
  };
  put32(16, 30000);  // IHDR data starts at 16: width, height
  put32(20, 30000);
  put32(29, static_cast<std::uint32_t>(crc32(0, reinterpret_cast<const Bytef*>(big.data() + 12), 17)));
  CHECK_FALSE(runs::png_thumbnail(big));
}

TEST_CASE("image keeper: a thumbnail per theme under its own name, a bad PNG counted") {
  TempDir t;
  std::string dir = store::sweep_images_dir(t.file("p.db"), 7);
  CHECK(dir == t.file("p.db") + ".sweep-images/7");
  runs::ImageKeeper keeper(dir);
  keeper.keep(kHostilePath, {{"light", make_png(640, 360)}, {"dark", "garbage"}});
  keeper.finish();
  CHECK(keeper.written() == 1);
  CHECK(keeper.failed() == 1);
  std::ifstream in(dir + "/" + runs::sweep_image_name(kHostilePath, "light"), std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  Decoded d = decode(ss.str());
  CHECK((d.w == 320 && d.h == 180));
  CHECK(runs::sweep_image_name(kHostilePath, "light").size() == 16 + 1 + 5 + 4);
  // Only our names in the directory: the file's own name never reaches the file system.
  std::size_t entries = 0;
  for (const auto& e : std::filesystem::directory_iterator(dir)) {
    ++entries;
    CHECK(std::regex_match(e.path().filename().string(), std::regex("[0-9a-f]{16}-(light|dark)\\.png")));
  }
  CHECK(entries == 1);
  store::remove_sweep_images(t.file("p.db"), 7);
  CHECK_FALSE(std::filesystem::exists(dir));
}
