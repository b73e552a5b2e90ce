#include "bisect/plausibility.hpp"
#include "bisect/stats.hpp"
#include "bisect/verify_stats.hpp"

#include <catch2/catch.hpp>

#include <cmath>

using namespace bisectd::bisect;

TEST_CASE("strip_c_comments removes comments and whitespace but keeps literals") {
  CHECK(strip_c_comments("int a = 1; // one\n/* two\n three */ int b;") == "int a=1;int b;");
  CHECK(strip_c_comments("int  a=1;  \n\t") == strip_c_comments("int a = 1;"));
  CHECK(strip_c_comments("x = a - -b;") != strip_c_comments("x = a --b;"));
  CHECK(strip_c_comments("int/**/x;") == "int x;");
  CHECK(strip_c_comments("s = \"http://x /* y */\"; // c") == "s=\"http://x /* y */\";");
  CHECK(strip_c_comments("c = '/'; d = '\\''; /**/") == "c='/';d='\\'';");
  CHECK(strip_c_comments(" * tail of a comment */ x++;", true) == "x++;");
  CHECK(strip_c_comments("x = 1;") != strip_c_comments("x = 2;"));
}

TEST_CASE("classify_path knows documentation, tests and foreign architectures") {
  CHECK(classify_path("Documentation/admin-guide/x.rst", "x86_64") == PathKind::documentation);
  CHECK(classify_path("README.md", "") == PathKind::documentation);
  CHECK(classify_path("notes/todo.txt", "") == PathKind::documentation);
  CHECK(classify_path("CMakeLists.txt", "") == PathKind::code);
  CHECK(classify_path("tools/testing/selftests/vm/a.c", "x86_64") == PathKind::test);
  CHECK(classify_path("tests/unit/a.cpp", "") == PathKind::test);
  CHECK(classify_path("arch/arm64/kernel/head.S", "x86_64") == PathKind::other_arch);
  CHECK(classify_path("arch/x86/kernel/head_64.S", "x86_64") == PathKind::code);
  CHECK(classify_path("arch/x86/kernel/head_64.S", "") == PathKind::code); // not a kernel recipe
  CHECK(classify_path("arch/arm64/mm/fault.c", "aarch64") == PathKind::code);
  CHECK(classify_path("mm/page_alloc.c", "x86_64") == PathKind::code);
}

namespace {

const char* k_patch = R"(From 1234 Mon Sep 17 00:00:00 2001
Subject: [PATCH] a change

---
 a.c | 2 +-
 b.h | 3 ++-

diff --git a/a.c b/a.c
index 1..2 100644
--- a/a.c
+++ b/a.c
@@ -1,4 +1,4 @@
 /*
- * old words
+ * new words, longer
  */
 int x;
diff --git a/b.h b/b.h
--- a/b.h
+++ b/b.h
@@ -10,3 +10,4 @@
  * inside a comment opened above
  */
-#define N 1 // one
+#define N 1   /* still one */
+
)";

} // namespace

TEST_CASE("parse_patch splits files and hunk sides") {
  auto files = parse_patch(k_patch);
  REQUIRE(files.size() == 2);
  CHECK(files[0].path == "a.c");
  REQUIRE(files[0].hunks.size() == 1);
  CHECK(files[0].hunks[0].first == "/*\n * old words\n */\nint x;\n");
  CHECK(files[0].hunks[0].second == "/*\n * new words, longer\n */\nint x;\n");
  CHECK(hunks_comment_only(files[0]));
  CHECK(hunks_comment_only(files[1])); // the hunk starts inside a block comment
  auto reason = implausible_diff(files, "");
  REQUIRE(reason);
  CHECK(reason->find("only comments in a.c") != std::string::npos);
}

TEST_CASE("implausible_diff sees code changes") {
  auto files = parse_patch("diff --git a/w.h b/w.h\n@@ -1 +1 @@\n-#define N 1 /* x */\n+#define N 2 /* x */\n");
  REQUIRE(files.size() == 1);
  CHECK_FALSE(hunks_comment_only(files[0]));
  CHECK_FALSE(implausible_diff(files, ""));
  auto makefile = parse_patch("diff --git a/Makefile b/Makefile\n@@ -1 +1 @@\n-# a\n+# b\n");
  CHECK_FALSE(implausible_diff(makefile, "")); // not C-like: treated as code
  auto docs = parse_patch("diff --git a/Documentation/x.rst b/Documentation/x.rst\n@@ -1 +1 @@\n-a\n+b\n"
                          "diff --git a/arch/arm64/a.c b/arch/arm64/a.c\n@@ -1 +1 @@\n-a;\n+b;\n");
  CHECK(implausible_diff(docs, "x86_64"));
  CHECK_FALSE(implausible_diff(docs, "arm64"));
  CHECK_FALSE(implausible_diff({}, ""));
  auto binary = parse_patch("diff --git a/a.c b/a.c\nBinary files a/a.c and b/a.c differ\n");
  CHECK_FALSE(implausible_diff(binary, ""));
}

TEST_CASE("shift_vanished compares the variant's shift with the normal one") {
  bisectd::bisect::ShiftTest normal{-0.15, 1e-4, true, true};
  CHECK(shift_vanished(normal, {-0.003, 0.6, false, false}));
  CHECK(shift_vanished(normal, {0.02, 0.3, false, false}));
  CHECK_FALSE(shift_vanished(normal, {-0.14, 1e-4, true, true}));
  CHECK_FALSE(shift_vanished(normal, {-0.10, 0.05, false, false})); // not significant but not gone either
}

TEST_CASE("mean_change, median and recovered_fraction") {
  auto c = mean_change({100, 102, 98, 100}, {90, 92, 88, 90});
  CHECK(c.change == Approx(-0.10));
  CHECK(c.half_width > 0);
  CHECK(c.half_width < 0.05);
  CHECK(std::isnan(mean_change({1}, {2, 3}).change));
  CHECK(median(std::vector<double>{3, 1, 2}) == 2);
  CHECK(median(std::vector<double>{4, 1, 2, 3}) == 2.5);
  // The culprit cost 20 %: a revert that reads 1/0.8 of the bad head (interleaved) undid all of it.
  CHECK(recovered_fraction({80, 80}, {100, 100}, -0.2) == Approx(1.0));
  CHECK(recovered_fraction({80}, {80}, -0.2) == Approx(0));
  CHECK(recovered_fraction({40, 40}, {40 * std::sqrt(2.5)}, -0.6) == Approx(0.5)); // half, in log terms
  // Scale does not matter: both sides drifted down 30 % together.
  CHECK(recovered_fraction({56}, {70}, -0.2) == Approx(1.0));
  CHECK(recovered_fraction({120}, {100}, 0.2) == Approx(1.0)); // an improvement, reverted
  CHECK(std::isnan(recovered_fraction({100}, {90}, 0.0)));
  CHECK(std::isnan(recovered_fraction({}, {90}, -0.2)));
}

TEST_CASE("revert_recovery's interval and the verdicts it allows") {
  // Quiet runs: 20 % lost, all of it back, a narrow interval.
  auto quiet = revert_recovery({80, 81, 79, 80, 80.5, 79.5}, {100, 101, 99, 100, 100.5, 99.5}, -0.2);
  CHECK(quiet.fraction == Approx(1.0));
  CHECK(quiet.half_width > 0);
  CHECK(quiet.half_width < 0.2);
  CHECK(revert_verdict(quiet) == RevertVerdict::comes_back);
  // The same medians under ±30 % noise: anything from nothing to all of it, so no verdict.
  auto noisy = revert_recovery({80, 110, 56, 80, 104, 60}, {100, 140, 70, 100, 130, 75}, -0.2);
  CHECK(noisy.fraction == Approx(1.0));
  CHECK(revert_verdict(noisy) == RevertVerdict::too_noisy);
  // More noisy runs narrow it enough to judge.
  std::vector<double> bad, revert;
  for (int i = 0; i < 60; ++i) {
    double wobble = 1 + 0.3 * ((i % 5) - 2) / 2.0; // 0.7 .. 1.3
    bad.push_back(80 * wobble);
    revert.push_back(100 * wobble);
  }
  CHECK(revert_verdict(revert_recovery(bad, revert, -0.2)) == RevertVerdict::comes_back);
  // Identical runs: no spread, the fraction decides.
  CHECK(revert_verdict(revert_recovery({80, 80}, {80, 80}, -0.2)) == RevertVerdict::does_not_come_back);
  CHECK(revert_verdict(revert_recovery({80, 80}, {89, 89}, -0.2)) == RevertVerdict::partly);
  // One run a side: no interval, judged by the fraction alone.
  auto single = revert_recovery({80}, {100}, -0.2);
  CHECK(std::isnan(single.half_width));
  CHECK(revert_verdict(single) == RevertVerdict::comes_back);
  CHECK(revert_verdict(revert_recovery({100}, {90}, 0.0)) == RevertVerdict::unknown);
  // An interval inside one side of the thresholds is a verdict even when wide.
  CHECK(revert_verdict(Recovery{1.2, 0.45}) == RevertVerdict::comes_back);
  CHECK(revert_verdict(Recovery{0.0, 0.25}) == RevertVerdict::does_not_come_back);
  CHECK(revert_verdict(Recovery{0.5, 0.45}) == RevertVerdict::too_noisy);
}
