#include <catch2/catch.hpp>

#include <chrono>
#include <string>

#include "table/classify.hpp"

using namespace plotq::table;

static PasteKind kind(std::string_view s) { return classify_paste(s).kind; }

TEST_CASE("python, R and JavaScript snippets are code") {
  CHECK(kind("import numpy as np\nx = np.linspace(0, 10, 100)\ndf = pd.DataFrame({'x': x})\n") ==
        PasteKind::code);
  CHECK(kind("np.linspace(0, 10, 100)") == PasteKind::code);
  CHECK(kind("x <- seq(0, 10, by = 0.1)\ny <- rnorm(101)\n") == PasteKind::code);
  CHECK(kind("const xs = [];\nfor (let i = 0; i < 10; i++) {\n  xs.push(i * i);\n}\n") == PasteKind::code);
  CHECK(kind("def f(t):\n    return t * 2\n") == PasteKind::code);
  CHECK(kind("const f = (x) => x * 2;\n") == PasteKind::code);
}

TEST_CASE("tables stay tables, even with one code-looking cell") {
  CHECK(kind("name,value\nprint(x),3\n") == PasteKind::table);
  CHECK(kind("x,y\n1,2\n3,4\n") == PasteKind::table);
  CHECK(kind("city;temp\nBern;3,5\nZurich;4,0\n") == PasteKind::table);
  CHECK(kind("label,expr\na,np.sin(1)\nb,2\nc,3\n") == PasteKind::table);
}

TEST_CASE("closed formulas are formulas") {
  CHECK(kind("y = sin(x) * 2") == PasteKind::formula);
  CHECK(kind("f(x) = x^2 + 3x, x from 0 to 10") == PasteKind::formula);
  CHECK(kind("x,y\n1,2\n") != PasteKind::formula);
}

TEST_CASE("mostly prose with one import line is not code") {
  CHECK(kind("These are my numbers\nfrom the lab\nimport duties apply\nplease plot them\n") ==
        PasteKind::table);
}

TEST_CASE("classification is linear: a long hostile line does not blow up") {
  // Patterns that make backtracking regexes quadratic: many spaces before an anchor.
  std::string hostile = "for " + std::string(190'000, ' ') + "x";
  std::string parens(190'000, '(');
  auto c1 = classify_paste(hostile);
  auto c2 = classify_paste(parens);
  CHECK(c1.lines == 1);
  CHECK(c2.lines == 1);
}
